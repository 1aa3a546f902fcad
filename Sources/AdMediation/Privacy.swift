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
