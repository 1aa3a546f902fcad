/// An IAB Global Privacy Platform string, decoded: the header (type 3, version 1, the section ids), the sections
/// this library acts on (EU TCF v2, id 2; US Privacy, id 6; US National, id 7) decoded, and every section kept as its
/// text by id (the others are only kept). A pure value: never traps, refuses over ``maxLength`` characters or over
/// ``maxSections`` sections.
public struct GPPString: Hashable, Sendable {
    /// The longest string decoded.
    public static let maxLength = 65_536
    /// The most sections a header may list.
    public static let maxSections = 64
    /// The highest section id accepted (ids 1…27 are assigned today).
    public static let maxSectionID = 4095

    /// The header's version (1).
    public var version: Int
    /// The section ids the header lists, ascending; the sections follow in this order.
    public var sectionIDs: [Int]
    /// Every section's text, by id.
    public var sections: [Int: String]
    /// Section 2, EU TCF v2, decoded.
    public var tcfEU: TCFConsent?
    /// Section 6, US Privacy, decoded.
    public var usPrivacy: USPrivacyString?
    /// Section 7, US National, decoded.
    public var usNational: USNationalSection?
    /// Why each section this decoder reads (2, 6, 7) did not decode, by id. A section that does not decode is left
    /// out (its decoded value nil) and its siblings still count: the privacy rules read it as the refusal it may carry
    /// (fail closed) and honour the sections that do decode.
    public var sectionErrors: [Int: ConsentStringError] = [:]

    /// Decodes `string`: `header~section~section…`. A header that does not decode, or that does not match the
    /// sections that follow, makes the whole string an error; a section this decoder reads but cannot decode is kept
    /// as its error in ``sectionErrors``.
    public init(decoding string: String) throws(ConsentStringError) {
        guard string.utf8.count <= Self.maxLength else {
            throw ConsentStringError(.tooLong, "GPP string: \(string.utf8.count) characters, at most \(Self.maxLength)")
        }
        let parts = string.split(separator: "~", omittingEmptySubsequences: false)
        guard let header = parts.first, !header.isEmpty else {
            throw ConsentStringError(.empty, "GPP string: no header")
        }
        var bits = try ConsentBitReader(base64URL: header, name: "GPP header")
        let type = try bits.int(6, "Type")
        guard type == 3 else { throw ConsentStringError(.invalidField, "GPP header: Type \(type), must be 3") }
        version = try bits.int(6, "Version")
        guard version == 1 else {
            throw ConsentStringError(.unsupportedVersion, "GPP header: Version \(version), only 1 is read")
        }
        let count = try bits.int(12, "SectionIds.NumEntries")
        var ids: [Int] = []
        var offset = 0
        for index in 0..<count {
            let isRange = try bits.bool("SectionIds[\(index)].IsARange")
            let start = offset + (try bits.fibonacci("SectionIds[\(index)]"))
            let end = isRange ? start + (try bits.fibonacci("SectionIds[\(index)].End")) : start
            guard end <= Self.maxSectionID else {
                throw ConsentStringError(.invalidField, "GPP header: section id \(end) above \(Self.maxSectionID)")
            }
            guard ids.count + (end - start + 1) <= Self.maxSections else {
                throw ConsentStringError(.tooManyEntries, "GPP header: more than \(Self.maxSections) sections")
            }
            ids.append(contentsOf: start...end)
            offset = end
        }
        guard parts.count - 1 == ids.count else {
            throw ConsentStringError(
                .invalidField, "GPP string: the header lists \(ids.count) sections, \(parts.count - 1) follow")
        }
        guard Set(ids).count == ids.count else {
            throw ConsentStringError(.invalidField, "GPP header: a section id is listed twice")
        }
        sectionIDs = ids
        var sections: [Int: String] = [:]
        for (id, text) in zip(ids, parts.dropFirst()) { sections[id] = String(text) }
        self.sections = sections
        var errors: [Int: ConsentStringError] = [:]
        func decoded<Section>(_ id: Int, _ decode: (String) throws(ConsentStringError) -> Section) -> Section? {
            guard let text = sections[id] else { return nil }
            do { return try decode(text) } catch {
                errors[id] = error
                return nil
            }
        }
        tcfEU = decoded(2) { text throws(ConsentStringError) in try TCFConsent(decoding: text) }
        usPrivacy = decoded(6) { text throws(ConsentStringError) in try USPrivacyString(decoding: text) }
        usNational = decoded(7) { text throws(ConsentStringError) in try USNationalSection(decoding: text) }
        sectionErrors = errors
    }
}

/// An IAB US Privacy (CCPA) string, `1YNN`: version, notice given, opted out of sale, covered by the LSPA.
public struct USPrivacyString: Hashable, Sendable {
    /// A flag: `Y`, `N` or `-` (not applicable).
    public enum Flag: Character, Hashable, Sendable {
        /// Yes.
        case yes = "Y"
        /// No.
        case no = "N"
        /// Not applicable.
        case notApplicable = "-"
    }

    /// The version (1).
    public var version: Int
    /// Explicit notice of the opportunity to opt out was given.
    public var notice: Flag
    /// The user opted out of the sale of personal information.
    public var optOutSale: Flag
    /// The publisher is a signatory of the IAB Limited Service Provider Agreement.
    public var lspaCovered: Flag

    /// Decodes `string`: exactly four characters, a version digit then three flags.
    public init(decoding string: String) throws(ConsentStringError) {
        let characters = Array(string.prefix(5))
        guard characters.count == 4 else {
            throw ConsentStringError(.invalidField, "US Privacy string: \(string.count) characters, must be 4")
        }
        guard let version = characters[0].wholeNumberValue, version == 1 else {
            throw ConsentStringError(.unsupportedVersion, "US Privacy string: version \(characters[0]), only 1 is read")
        }
        func flag(_ character: Character, _ field: String) throws(ConsentStringError) -> Flag {
            guard let flag = Flag(rawValue: character) else {
                throw ConsentStringError(.invalidField, "US Privacy string: \(field) is not Y, N or -")
            }
            return flag
        }
        self.version = version
        notice = try flag(characters[1], "Notice")
        optOutSale = try flag(characters[2], "OptOutSale")
        lspaCovered = try flag(characters[3], "LSPACovered")
    }
}

/// GPP section 7, the US National privacy section (versions 1 and 2), with its optional GPC subsection.
///
/// Values are the specification's: for notices 0 not applicable, 1 provided, 2 not provided; for opt-outs
/// 0 not applicable, 1 opted out, 2 did not opt out; for consents 0 not applicable, 1 no consent, 2 consent.
public struct USNationalSection: Hashable, Sendable {
    /// The section's version (1 or 2).
    public var version: Int
    /// Notice of sharing given.
    public var sharingNotice: Int
    /// Notice of the opportunity to opt out of sale given.
    public var saleOptOutNotice: Int
    /// Notice of the opportunity to opt out of sharing given.
    public var sharingOptOutNotice: Int
    /// Notice of the opportunity to opt out of targeted advertising given.
    public var targetedAdvertisingOptOutNotice: Int
    /// Notice of the opportunity to opt out of sensitive data processing given.
    public var sensitiveDataProcessingOptOutNotice: Int
    /// Notice of the opportunity to limit the use of sensitive data given.
    public var sensitiveDataLimitUseNotice: Int
    /// Opted out of the sale of personal data.
    public var saleOptOut: Int
    /// Opted out of sharing.
    public var sharingOptOut: Int
    /// Opted out of targeted advertising.
    public var targetedAdvertisingOptOut: Int
    /// Consent per sensitive data category (12 in version 1, 16 in version 2; the 8th is precise geolocation).
    public var sensitiveDataProcessing: [Int]
    /// Consent for the data of known children (2 in version 1: under 13, 13–16; 3 in version 2).
    public var knownChildSensitiveDataConsents: [Int]
    /// Consent to collect personal data beyond what is reasonably necessary.
    public var personalDataConsents: Int
    /// The transaction is covered by the MSPA (1 yes, 2 no).
    public var mspaCoveredTransaction: Int
    /// MSPA opt-out option mode (1 yes, 2 no, 0 not applicable).
    public var mspaOptOutOptionMode: Int
    /// MSPA service provider mode (1 yes, 2 no, 0 not applicable).
    public var mspaServiceProviderMode: Int
    /// The Global Privacy Control signal, when the GPC subsection is present.
    public var gpc: Bool?

    /// The index (from 0) of precise geolocation in ``sensitiveDataProcessing``.
    public static let preciseGeolocationIndex = 7

    /// Decodes the section: the core, then an optional `.`-separated GPC subsection.
    public init(decoding string: String) throws(ConsentStringError) {
        let parts = string.split(separator: ".", omittingEmptySubsequences: false)
        guard let core = parts.first, !core.isEmpty, parts.count <= 2 else {
            throw ConsentStringError(.invalidField, "US National section: a core and at most one subsection")
        }
        var bits = try ConsentBitReader(base64URL: core, name: "US National section")
        version = try bits.int(6, "Version")
        guard version == 1 || version == 2 else {
            throw ConsentStringError(.unsupportedVersion, "US National section: Version \(version), only 1 and 2")
        }
        func field(_ name: String) throws(ConsentStringError) -> Int { try bits.int(2, name) }
        sharingNotice = try field("SharingNotice")
        saleOptOutNotice = try field("SaleOptOutNotice")
        sharingOptOutNotice = try field("SharingOptOutNotice")
        targetedAdvertisingOptOutNotice = try field("TargetedAdvertisingOptOutNotice")
        sensitiveDataProcessingOptOutNotice = try field("SensitiveDataProcessingOptOutNotice")
        sensitiveDataLimitUseNotice = try field("SensitiveDataLimitUseNotice")
        saleOptOut = try field("SaleOptOut")
        sharingOptOut = try field("SharingOptOut")
        targetedAdvertisingOptOut = try field("TargetedAdvertisingOptOut")
        var sensitive: [Int] = []
        for index in 0..<(version == 1 ? 12 : 16) { sensitive.append(try field("SensitiveDataProcessing[\(index)]")) }
        sensitiveDataProcessing = sensitive
        var children: [Int] = []
        for index in 0..<(version == 1 ? 2 : 3) {
            children.append(try field("KnownChildSensitiveDataConsents[\(index)]"))
        }
        knownChildSensitiveDataConsents = children
        personalDataConsents = try field("PersonalDataConsents")
        mspaCoveredTransaction = try field("MspaCoveredTransaction")
        mspaOptOutOptionMode = try field("MspaOptOutOptionMode")
        mspaServiceProviderMode = try field("MspaServiceProviderMode")
        gpc = nil
        if parts.count == 2 {
            var sub = try ConsentBitReader(base64URL: parts[1], name: "US National GPC subsection")
            let type = try sub.int(2, "SubsectionType")
            guard type == 1 else {
                throw ConsentStringError(.invalidField, "US National section: subsection type \(type), must be 1")
            }
            gpc = try sub.bool("Gpc")
        }
    }

    /// The user opted out of sale, sharing or targeted advertising, or sent GPC.
    public var optedOutOfTargeting: Bool {
        saleOptOut == 1 || sharingOptOut == 1 || targetedAdvertisingOptOut == 1 || gpc == true
    }
}
