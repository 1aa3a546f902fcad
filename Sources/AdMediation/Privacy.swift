import AdPrivacy

/// The privacy signals that travel with every ad request. Adapters must pass each one their network supports
/// to the wire (the conformance kit checks this).
public struct PrivacySignals: Hashable, Sendable, Codable {
    /// GDPR applies to this user (`nil`: unknown).
    public var gdprApplies: Bool?
    /// IAB TCF v2 consent string.
    public var tcfConsent: String?
    /// IAB US Privacy (CCPA) string, e.g. `1YNN`.
    public var usPrivacy: String?
    /// IAB Global Privacy Platform string.
    public var gpp: String?
    /// GPP section ids that apply.
    public var gppSectionIDs: [Int]
    /// The app is directed to children (COPPA).
    public var coppa: Bool
    /// The user is under the age of consent.
    public var underAgeOfConsent: Bool
    /// Apple's App Tracking Transparency status (`nil`: not an Apple platform, or unknown).
    public var appTracking: AppTrackingStatus? = nil
    /// The user limited ad tracking (the platform's setting, OpenRTB's `lmt`).
    public var limitAdTracking: Bool = false
    /// What the network this request goes to may receive, as the ``Mediator`` decided it from the privacy rules
    /// (`PrivacyRules`, the `AdPrivacy` module) for that network (nil: not decided, e.g. an adapter called directly).
    public var permissions: PrivacyPermissions? = nil

    /// What the network may receive: ``permissions`` when the mediator set them, else the rules' verdict for a
    /// network without a declared vendor id. Adapters send no device id, user id or precise geo it forbids.
    public var effectivePermissions: PrivacyPermissions {
        permissions ?? PrivacyRules.verdict(self, tcfVendorID: nil).permissions
    }

    /// Creates privacy signals; everything defaults to "not set".
    public init(
        gdprApplies: Bool? = nil,
        tcfConsent: String? = nil,
        usPrivacy: String? = nil,
        gpp: String? = nil,
        gppSectionIDs: [Int] = [],
        coppa: Bool = false,
        underAgeOfConsent: Bool = false
    ) {
        self.gdprApplies = gdprApplies
        self.tcfConsent = tcfConsent
        self.usPrivacy = usPrivacy
        self.gpp = gpp
        self.gppSectionIDs = gppSectionIDs
        self.coppa = coppa
        self.underAgeOfConsent = underAgeOfConsent
    }

    /// True when the request must not use personal data (COPPA or under age).
    public var restrictsPersonalData: Bool { coppa || underAgeOfConsent }
}

/// The privacy rules (`AdPrivacy`, below the core) read the signals through `PrivacySignalValues`.
extension PrivacySignals: PrivacySignalValues {}

extension DecodedPrivacy {
    /// Decodes `signals` through the shared cache (`ConsentDecodeCache`): the same strings are decoded once, whichever
    /// request or network needs them.
    public init(_ signals: PrivacySignals) {
        self.init(signals, decoders: ConsentDecodeCache.shared.decoders)
    }
}

extension PrivacyRules {
    /// The verdict for undecoded `signals` (decodes them first, through the shared cache).
    public static func verdict(_ signals: PrivacySignals, tcfVendorID: Int?) -> PrivacyVerdict {
        verdict(DecodedPrivacy(signals), tcfVendorID: tcfVendorID)
    }
}
