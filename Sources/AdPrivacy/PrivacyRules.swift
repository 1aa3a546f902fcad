/// The privacy signals the rules read, as the core's `PrivacySignals` holds them (it conforms): the consent strings as
/// given, the GPP sections in force, and the flags that restrict a request whatever the consent says.
public protocol PrivacySignalValues: Sendable {
    /// GDPR applies to this user (`nil`: unknown).
    var gdprApplies: Bool? { get }
    /// IAB TCF v2 consent string.
    var tcfConsent: String? { get }
    /// IAB US Privacy (CCPA) string, e.g. `1YNN`.
    var usPrivacy: String? { get }
    /// IAB Global Privacy Platform string.
    var gpp: String? { get }
    /// GPP section ids that apply.
    var gppSectionIDs: [Int] { get }
    /// The app is directed to children (COPPA).
    var coppa: Bool { get }
    /// The user is under the age of consent.
    var underAgeOfConsent: Bool { get }
    /// Apple's App Tracking Transparency status (`nil`: not an Apple platform, or unknown).
    var appTracking: AppTrackingStatus? { get }
    /// The user limited ad tracking (the platform's setting, OpenRTB's `lmt`).
    var limitAdTracking: Bool { get }
}

/// Apple's App Tracking Transparency authorisation, with OpenRTB's `device.ext.atts` values.
public enum AppTrackingStatus: Int, Hashable, Sendable, Codable, CaseIterable {
    /// The user has not been asked yet.
    case notDetermined = 0
    /// Tracking is restricted (parental controls, a managed device).
    case restricted = 1
    /// The user refused tracking.
    case denied = 2
    /// The user allowed tracking.
    case authorized = 3
}

/// How ``DecodedPrivacy`` decodes each consent string: the core passes its shared, bounded cache
/// (`ConsentDecodeCache`), so the same string is decoded once whichever request or network needs it.
package struct ConsentStringDecoders: Sendable {
    /// Decodes a TC string.
    package var tcf: @Sendable (String) -> Result<TCFConsent, ConsentStringError>
    /// Decodes a GPP string.
    package var gpp: @Sendable (String) -> Result<GPPString, ConsentStringError>
    /// Decodes a US Privacy string.
    package var usPrivacy: @Sendable (String) -> Result<USPrivacyString, ConsentStringError>

    /// Decoders over `tcf`, `gpp` and `usPrivacy`.
    package init(
        tcf: @escaping @Sendable (String) -> Result<TCFConsent, ConsentStringError>,
        gpp: @escaping @Sendable (String) -> Result<GPPString, ConsentStringError>,
        usPrivacy: @escaping @Sendable (String) -> Result<USPrivacyString, ConsentStringError>
    ) {
        self.tcf = tcf
        self.gpp = gpp
        self.usPrivacy = usPrivacy
    }
}

/// What a network may receive with one request, after the privacy rules (``PrivacyRules``).
public struct PrivacyPermissions: Hashable, Sendable, Codable {
    /// Device identifiers (the advertising id, OpenRTB's `device.ifa`).
    public var deviceIDs: Bool
    /// The app's user ids (`AdRequest.userID`, a network's user id fields).
    public var userIDs: Bool
    /// Precise geolocation (coordinates finer than a city).
    public var preciseGeo: Bool
    /// A personalised request (ads chosen from a profile of the user).
    public var personalizedAds: Bool

    /// Creates permissions; everything allowed by default.
    public init(deviceIDs: Bool = true, userIDs: Bool = true, preciseGeo: Bool = true, personalizedAds: Bool = true) {
        self.deviceIDs = deviceIDs
        self.userIDs = userIDs
        self.preciseGeo = preciseGeo
        self.personalizedAds = personalizedAds
    }

    /// Everything allowed.
    public static let all = PrivacyPermissions()
    /// Nothing allowed.
    public static let none = PrivacyPermissions(
        deviceIDs: false, userIDs: false, preciseGeo: false, personalizedAds: false)
}

/// The rules' decision for one network and one request: whether it may be asked at all and, if so, what it may
/// receive, with the reason of every restriction.
public struct PrivacyVerdict: Hashable, Sendable {
    /// Why the network may not be asked (`tcf purpose 1 not consented for vendor 755`); nil when it may.
    public var blockedReason: String?
    /// What it may receive.
    public var permissions: PrivacyPermissions
    /// Why each restriction applies, in table order (`coppa`, `att denied`, …).
    public var reasons: [String]

    /// The network may be asked.
    public var mayBeAsked: Bool { blockedReason == nil }
}

/// The privacy signals of one request, decoded once for every network the request goes to: the TCF string (from
/// `PrivacySignals.tcfConsent`, else the GPP string's section 2), the GPP string, the US Privacy string (from
/// `PrivacySignals.usPrivacy`, else GPP section 6) and the US National section (GPP section 7). A GPP section
/// counts only when `PrivacySignals.gppSectionIDs` lists it, or lists nothing. A string (or a GPP section) that does
/// not decode is kept as its error, read as "no consent" where consent is needed and as an opt-out otherwise (fails
/// closed), and named in ``malformed``; a GPP section that decodes counts even when a sibling does not.
///
/// Whether GDPR applies is decided here, in one place (``gdprApplies(_:gpp:)``). Decoding is cached by the strings
/// (`ConsentDecodeCache`): the same strings are decoded once, whichever request or network needs them.
public struct DecodedPrivacy: Sendable {
    /// The signals as given (the core's `PrivacySignals`).
    public var signals: any PrivacySignalValues
    /// The TCF consent, when a string was given and decodes.
    public var tcf: TCFConsent?
    /// Why the TCF string (or GPP section 2, when it is the TCF string in force) did not decode.
    public var tcfError: ConsentStringError?
    /// The GPP string, when given and it decodes.
    public var gpp: GPPString?
    /// Why the GPP string did not decode.
    public var gppError: ConsentStringError?
    /// Why the US Privacy string did not decode (lower case, a stray space, the wrong length…).
    public var usPrivacyError: ConsentStringError?
    /// The US Privacy string in force.
    public var usPrivacy: USPrivacyString?
    /// The US National section in force.
    public var usNational: USNationalSection?
    /// GDPR applies (``gdprApplies(_:gpp:)``).
    public var gdprApplies: Bool
    /// Every US Privacy or GPP signal given that does not decode (the string, or GPP section 6 or 7), each naming its
    /// field and quoting the start of its value (`invalid us_privacy "1yyn" (invalid_field)`, `invalid gpp section 6
    /// "1YNNN" (invalid_field)`): the rules read each as an opt-out.
    public var malformed: [String] = []
    /// The TC string in force that does not decode (`PrivacySignals.tcfConsent`, or GPP section 2), named like
    /// ``malformed`` (`invalid tcf "x" (unsupported_version)`): under GDPR, the rules block.
    public var malformedTCF: String?

    /// Decodes `signals` with `decoders` (the core's `DecodedPrivacy.init(_:)` passes its shared cache's).
    package init(_ signals: any PrivacySignalValues, decoders: ConsentStringDecoders) {
        self.signals = signals
        var malformed: [String] = []
        var malformedTCF: String?
        var gpp: GPPString?
        if let text = signals.gpp {
            switch decoders.gpp(text) {
            case .success(let decoded): gpp = decoded
            case .failure(let error):
                gppError = error
                malformed.append(Self.invalid("gpp", text, error))
            }
        }
        self.gpp = gpp
        let listed = Set(signals.gppSectionIDs)
        // A GPP section counts when gpp_sid lists it, or lists nothing (then every section of the string applies).
        func applies(_ id: Int) -> Bool { gpp?.sections[id] != nil && (listed.isEmpty || listed.contains(id)) }
        func sectionError(_ id: Int) -> ConsentStringError? {
            guard applies(id), let error = gpp?.sectionErrors[id] else { return nil }
            let reason = Self.invalid("gpp section \(id)", gpp?.sections[id] ?? "", error)
            if id == 2 { malformedTCF = reason } else { malformed.append(reason) }
            return error
        }
        if let text = signals.tcfConsent {
            switch decoders.tcf(text) {
            case .success(let decoded): tcf = decoded
            case .failure(let error):
                tcfError = error
                malformedTCF = Self.invalid("tcf", text, error)
            }
        } else if applies(2) {
            tcf = gpp?.tcfEU
            tcfError = sectionError(2)
        }
        if let text = signals.usPrivacy {
            switch decoders.usPrivacy(text) {
            case .success(let decoded): usPrivacy = decoded
            case .failure(let error):
                usPrivacyError = error
                malformed.append(Self.invalid("us_privacy", text, error))
            }
        }
        // A US Privacy string that does not decode never hides a readable GPP section 6.
        if usPrivacy == nil, applies(6) { usPrivacy = gpp?.usPrivacy }
        _ = sectionError(6)
        usNational = applies(7) ? gpp?.usNational : nil
        _ = sectionError(7)
        self.malformed = malformed
        self.malformedTCF = malformedTCF
        gdprApplies = Self.gdprApplies(signals, gpp: gpp)
    }

    /// Whether GDPR applies to a request with `signals` (and its GPP string decoded, `gpp`): the applicability rules,
    /// written down in the privacy article. Where the signals disagree, the stricter applies.
    ///
    /// 1. `gdpr=1` (`PrivacySignals.gdprApplies` true): it applies.
    /// 2. `PrivacySignals.gppSectionIDs` lists section 2 (EU TCF v2): it applies — even with `gdpr=0`, and even
    ///    when the GPP string lacks section 2 or is missing (then no TC string is in force, and the rules block).
    /// 3. `gdpr` not given and a TC string given (`PrivacySignals.tcfConsent`): it applies (fail closed: a TC string
    ///    is only written where the TCF is shown).
    /// 4. `gdpr` not given, `PrivacySignals.gppSectionIDs` empty and the GPP string has section 2: it applies (an
    ///    empty list means every section of the string applies).
    /// 5. Otherwise (`gdpr=0` without section 2 listed; nothing given) it does not.
    public static func gdprApplies(_ signals: any PrivacySignalValues, gpp: GPPString?) -> Bool {
        if signals.gdprApplies == true || signals.gppSectionIDs.contains(2) { return true }
        guard signals.gdprApplies == nil else { return false }
        if signals.tcfConsent != nil { return true }
        return signals.gppSectionIDs.isEmpty && gpp?.sections[2] != nil
    }

    /// The longest part of a malformed value quoted in a reason.
    static let quotedLength = 24

    /// `invalid FIELD "VALUE" (code)`, the value cut to ``quotedLength`` characters.
    static func invalid(_ field: String, _ value: String, _ error: ConsentStringError) -> String {
        let quoted = value.count > quotedLength ? value.prefix(quotedLength) + "…" : Substring(value)
        return "invalid \(field) \"\(quoted)\" (\(error.code))"
    }
}

/// The privacy rules, one table for every network (Prebid-style activity control): before a network is asked, the
/// mediator decides from the request's decoded signals and the network's declared TCF vendor id whether it may be
/// asked and what it may receive. Adapters strip what ``PrivacyPermissions`` forbids. The table, in order (every
/// row that matches applies; the first blocking row names the reason):
///
/// | row | when | effect |
/// |---|---|---|
/// | coppa | `PrivacySignals.coppa` | no device ids, no user ids, no precise geo, not personalised |
/// | under age | `PrivacySignals.underAgeOfConsent` | the same |
/// | lmt | `PrivacySignals.limitAdTracking` | no device ids, no user ids, not personalised |
/// | att | `PrivacySignals.appTracking` set and not `authorized` | the same |
/// | gdpr, no string | GDPR applies, no TCF string or one that does not decode | blocked |
/// | tcf undisclosed | GDPR applies, a disclosed-vendors segment without the vendor | blocked |
/// | tcf purpose 1 | GDPR applies, purpose 1 (device access) without consent (purpose or vendor) | blocked |
/// | tcf purpose 2 | GDPR applies, purpose 2 (basic ads) without consent or legitimate interest | blocked |
/// | tcf restriction | a publisher restriction forbids purpose 1 or 2, or requires what is missing | blocked |
/// | tcf purposes 3, 4 | GDPR applies, profile purpose 3 or 4 without consent | no user ids, not personalised |
/// | tcf special feature 1 | GDPR applies, precise geolocation not opted in | no precise geo |
/// | us privacy | US Privacy opt-out of sale `Y` | no device ids, no user ids, no precise geo, not personalised |
/// | unreadable signal | a US Privacy or GPP string (or GPP section 6 or 7) given that does not decode | the same |
/// | us national | sale, sharing or targeted-advertising opt-out, or GPC | the same |
/// | us national child | a known-child consent is "no consent" | the same |
/// | us national geo | precise geolocation's sensitive-data consent is "no consent" | no precise geo |
///
/// A network without a declared vendor id is checked on the purposes alone. Vendor consent, legitimate interest and
/// publisher restrictions follow the TCF v2 policy: purpose 1 needs consent; purpose 2 consent or legitimate interest,
/// unless a restriction requires one of them; purpose one treatment waives purpose 1's purpose-level consent.
public enum PrivacyRules {
    /// The verdict for a network declaring `tcfVendorID` (nil: none declared).
    public static func verdict(_ privacy: DecodedPrivacy, tcfVendorID: Int?) -> PrivacyVerdict {
        var verdict = PrivacyVerdict(blockedReason: nil, permissions: .all, reasons: [])
        func strip(_ reason: String, device: Bool = false, user: Bool = false, geo: Bool = false, ads: Bool = false) {
            verdict.reasons.append(reason)
            if device { verdict.permissions.deviceIDs = false }
            if user { verdict.permissions.userIDs = false }
            if geo { verdict.permissions.preciseGeo = false }
            if ads { verdict.permissions.personalizedAds = false }
        }
        let signals = privacy.signals
        if signals.coppa { strip("coppa", device: true, user: true, geo: true, ads: true) }
        if signals.underAgeOfConsent { strip("under age of consent", device: true, user: true, geo: true, ads: true) }
        if signals.limitAdTracking { strip("lmt", device: true, user: true, ads: true) }
        if let att = signals.appTracking, att != .authorized {
            strip("att \(att)", device: true, user: true, ads: true)
        }
        if privacy.gdprApplies {
            if let block = tcfBlock(privacy, vendor: tcfVendorID) {
                verdict.blockedReason = block
                verdict.reasons.append(block)
                verdict.permissions = .none
                return verdict
            }
            if let tcf = privacy.tcf {
                for purpose in [3, 4] where !consented(tcf, purpose: purpose, vendor: tcfVendorID) {
                    strip(notConsented(purpose, tcfVendorID), user: true, ads: true)
                }
                if !tcf.specialFeatureOptIns.contains(1) { strip("tcf special feature 1 not opted in", geo: true) }
            }
        }
        if privacy.usPrivacy?.optOutSale == .yes {
            strip("us privacy opt-out of sale", device: true, user: true, geo: true, ads: true)
        }
        // Fail closed: a signal the app gave but that does not decode may be the very opt-out it carries. (A TC string
        // that does not decode blocks under GDPR, above, and means nothing where GDPR does not apply.)
        for reason in privacy.malformed { strip(reason, device: true, user: true, geo: true, ads: true) }
        if let national = privacy.usNational {
            if national.optedOutOfTargeting {
                strip("us national opt-out", device: true, user: true, geo: true, ads: true)
            }
            if national.knownChildSensitiveDataConsents.contains(1) {
                strip("us national known child", device: true, user: true, geo: true, ads: true)
            }
            let geoIndex = USNationalSection.preciseGeolocationIndex
            if national.sensitiveDataProcessing.indices.contains(geoIndex),
                national.sensitiveDataProcessing[geoIndex] == 1
            {
                strip("us national precise geolocation not consented", geo: true)
            }
        }
        return verdict
    }

    /// Why a network may not be asked under GDPR, if it may not.
    private static func tcfBlock(_ privacy: DecodedPrivacy, vendor: Int?) -> String? {
        guard let tcf = privacy.tcf else {
            if let invalid = privacy.malformedTCF { return "gdpr applies, \(invalid)" }
            return "gdpr applies without a tcf string"
        }
        if let vendor, let disclosed = tcf.disclosedVendors, !disclosed.contains(vendor) {
            return "tcf vendor \(vendor) not disclosed"
        }
        let restrictions =
            vendor.map { vendor in
                tcf.publisherRestrictions.filter { $0.vendors.contains(vendor) }
            } ?? []
        for purpose in [1, 2] {
            let restriction = restrictions.first { $0.purpose == purpose }?.type
            if restriction == .notAllowed, let vendor {
                return "tcf purpose \(purpose) not allowed for vendor \(vendor) by a publisher restriction"
            }
            let byConsent = consented(tcf, purpose: purpose, vendor: vendor)
            let byInterest =
                purpose == 2 && tcf.purposeLegitimateInterests.contains(purpose)
                && (vendor.map { tcf.vendorLegitimateInterests.contains($0) } ?? true)
            let allowed =
                switch restriction {
                case .requireConsent: byConsent
                case .requireLegitimateInterest: byInterest
                default: byConsent || byInterest
                }
            if !allowed { return notConsented(purpose, vendor) }
        }
        return nil
    }

    /// Purpose `purpose` and the vendor (when declared) have the user's consent; purpose one treatment waives the
    /// purpose-level consent of purpose 1.
    private static func consented(_ tcf: TCFConsent, purpose: Int, vendor: Int?) -> Bool {
        let purposeOK = tcf.purposeConsents.contains(purpose) || (purpose == 1 && tcf.purposeOneTreatment)
        return purposeOK && (vendor.map { tcf.vendorConsents.contains($0) } ?? true)
    }

    private static func notConsented(_ purpose: Int, _ vendor: Int?) -> String {
        vendor.map { "tcf purpose \(purpose) not consented for vendor \($0)" } ?? "tcf purpose \(purpose) not consented"
    }
}
