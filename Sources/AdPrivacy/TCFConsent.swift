import Foundation

/// An IAB TCF v2 transparency and consent string, decoded: the core segment (version, CMP, purposes, vendors,
/// special features, publisher restrictions) and the optional segments that follow it after `.` — disclosed vendors
/// (mandatory from TCF v2.3), allowed vendors and the publisher's own purposes. A pure value: decoding reads only the
/// string, never traps, and refuses a string over ``maxLength`` characters.
public struct TCFConsent: Hashable, Sendable {
    /// The longest string decoded (a core segment with a 65 535-vendor bitfield for consents and legitimate interest
    /// takes about 22 000 characters).
    public static let maxLength = 32_768

    /// What a publisher restriction requires of the listed vendors for one purpose.
    public enum RestrictionType: Int, Hashable, Sendable {
        /// The purpose is not allowed for them at all.
        case notAllowed = 0
        /// They may use the purpose only with consent (not legitimate interest).
        case requireConsent = 1
        /// They may use the purpose only on legitimate interest (not consent).
        case requireLegitimateInterest = 2
        /// Reserved by the specification (kept, enforced as nothing).
        case undefined = 3
    }

    /// One publisher restriction: for purpose `purpose`, what `vendors` may do.
    public struct PublisherRestriction: Hashable, Sendable {
        /// The purpose restricted (1…24).
        public var purpose: Int
        /// What the restriction requires.
        public var type: RestrictionType
        /// The vendors it applies to.
        public var vendors: ConsentIDSet
    }

    /// The publisher's own purposes (segment type 3).
    public struct PublisherPurposes: Hashable, Sendable {
        /// Purposes the user consented to for the publisher.
        public var consents: ConsentIDSet
        /// Purposes the publisher uses on legitimate interest, with transparency given.
        public var legitimateInterests: ConsentIDSet
        /// Custom purposes consented to.
        public var customConsents: ConsentIDSet
        /// Custom purposes on legitimate interest.
        public var customLegitimateInterests: ConsentIDSet
    }

    /// The format's version (2).
    public var version: Int
    /// When the string was created, to the decisecond.
    public var created: Date
    /// When it was last updated.
    public var lastUpdated: Date
    /// The CMP's registered id.
    public var cmpID: Int
    /// The CMP's version.
    public var cmpVersion: Int
    /// The CMP screen the user acted on.
    public var consentScreen: Int
    /// The language of the notice (two letters, `EN`).
    public var consentLanguage: String
    /// The Global Vendor List version used.
    public var vendorListVersion: Int
    /// The TCF policy version (2 for TCF v2.0/2.1, 4 for v2.2, 5 for v2.3).
    public var policyVersion: Int
    /// The string is for one service only.
    public var isServiceSpecific: Bool
    /// Non-standard texts were used.
    public var useNonStandardTexts: Bool
    /// Special features opted in (1: precise geolocation, 2: active device scanning).
    public var specialFeatureOptIns: ConsentIDSet
    /// Purposes consented to (1…24).
    public var purposeConsents: ConsentIDSet
    /// Purposes with transparency for legitimate interest.
    public var purposeLegitimateInterests: ConsentIDSet
    /// Purpose 1 was not disclosed (a publisher in a country that treats it otherwise).
    public var purposeOneTreatment: Bool
    /// The publisher's country (two letters; `AA` for unknown).
    public var publisherCountryCode: String
    /// Vendors with the user's consent.
    public var vendorConsents: ConsentIDSet
    /// Vendors with transparency for legitimate interest.
    public var vendorLegitimateInterests: ConsentIDSet
    /// The publisher's restrictions.
    public var publisherRestrictions: [PublisherRestriction]
    /// The disclosed-vendors segment (type 1), when present: every vendor the CMP disclosed to the user.
    public var disclosedVendors: ConsentIDSet?
    /// The allowed-vendors segment (type 2), when present.
    public var allowedVendors: ConsentIDSet?
    /// The publisher purposes segment (type 3), when present.
    public var publisherPurposes: PublisherPurposes?

    /// Decodes `string` (the core segment, then any `.`-separated segments).
    public init(decoding string: String) throws(ConsentStringError) {
        guard string.utf8.count <= Self.maxLength else {
            throw ConsentStringError(.tooLong, "TCF string: \(string.utf8.count) characters, at most \(Self.maxLength)")
        }
        let segments = string.split(separator: ".", omittingEmptySubsequences: false)
        guard let core = segments.first, !core.isEmpty else {
            throw ConsentStringError(.empty, "TCF string: no core segment")
        }
        var bits = try ConsentBitReader(base64URL: core, name: "TCF core segment")
        version = try bits.int(6, "Version")
        guard version == 2 else {
            throw ConsentStringError(.unsupportedVersion, "TCF core segment: Version \(version), only 2 is read")
        }
        created = Date(timeIntervalSince1970: Double(try bits.int(36, "Created")) / 10)
        lastUpdated = Date(timeIntervalSince1970: Double(try bits.int(36, "LastUpdated")) / 10)
        cmpID = try bits.int(12, "CmpId")
        cmpVersion = try bits.int(12, "CmpVersion")
        consentScreen = try bits.int(6, "ConsentScreen")
        consentLanguage = try bits.letters("ConsentLanguage")
        vendorListVersion = try bits.int(12, "VendorListVersion")
        policyVersion = try bits.int(6, "TcfPolicyVersion")
        isServiceSpecific = try bits.bool("IsServiceSpecific")
        useNonStandardTexts = try bits.bool("UseNonStandardTexts")
        specialFeatureOptIns = try bits.bitfield(12, "SpecialFeatureOptIns")
        purposeConsents = try bits.bitfield(24, "PurposesConsent")
        purposeLegitimateInterests = try bits.bitfield(24, "PurposesLITransparency")
        purposeOneTreatment = try bits.bool("PurposeOneTreatment")
        publisherCountryCode = try bits.letters("PublisherCC")
        vendorConsents = try Self.vendorSection(&bits, "VendorConsents")
        vendorLegitimateInterests = try Self.vendorSection(&bits, "VendorLegitimateInterests")
        let restrictionCount = try bits.int(12, "NumPubRestrictions")
        var restrictions: [PublisherRestriction] = []
        for index in 0..<restrictionCount {
            let purpose = try bits.int(6, "PubRestrictionEntry[\(index)].PurposeId")
            let rawType = try bits.int(2, "PubRestrictionEntry[\(index)].RestrictionType")
            let vendors = try Self.rangeEntries(&bits, "PubRestrictionEntry[\(index)]")
            restrictions.append(
                PublisherRestriction(
                    purpose: purpose, type: RestrictionType(rawValue: rawType) ?? .undefined, vendors: vendors))
        }
        publisherRestrictions = restrictions
        disclosedVendors = nil
        allowedVendors = nil
        publisherPurposes = nil
        for (index, segment) in segments.dropFirst().enumerated() {
            let name = "TCF segment \(index + 2)"
            guard !segment.isEmpty else { throw ConsentStringError(.empty, "\(name): empty") }
            var bits = try ConsentBitReader(base64URL: segment, name: name)
            let type = try bits.int(3, "SegmentType")
            switch type {
            case 1: disclosedVendors = try Self.vendorSection(&bits, "DisclosedVendors")
            case 2: allowedVendors = try Self.vendorSection(&bits, "AllowedVendors")
            case 3:
                let consents = try bits.bitfield(24, "PubPurposesConsent")
                let interests = try bits.bitfield(24, "PubPurposesLITransparency")
                let custom = try bits.int(6, "NumCustomPurposes")
                publisherPurposes = PublisherPurposes(
                    consents: consents, legitimateInterests: interests,
                    customConsents: try bits.bitfield(custom, "CustomPurposesConsent"),
                    customLegitimateInterests: try bits.bitfield(custom, "CustomPurposesLITransparency"))
            default:
                // Type 0 is the core's own; other types are reserved: ignored, as the IAB's decoders do.
                continue
            }
        }
    }

    /// A vendor section: MaxVendorId, IsRangeEncoding, then a bitfield or range entries.
    private static func vendorSection(_ bits: inout ConsentBitReader, _ field: String) throws(ConsentStringError)
        -> ConsentIDSet
    {
        let maxVendorID = try bits.int(16, "\(field).MaxVendorId")
        if try bits.bool("\(field).IsRangeEncoding") {
            let set = try rangeEntries(&bits, field)
            if let last = set.ranges.last, last.upperBound > maxVendorID {
                throw ConsentStringError(
                    .invalidField,
                    "\(bits.name): \(field) names vendor \(last.upperBound) above MaxVendorId \(maxVendorID)")
            }
            return set
        }
        return try bits.bitfield(maxVendorID, "\(field).BitField")
    }

    /// NumEntries (12 bits), then per entry IsARange, StartOrOnlyVendorId and EndVendorId (16 bits each).
    private static func rangeEntries(_ bits: inout ConsentBitReader, _ field: String) throws(ConsentStringError)
        -> ConsentIDSet
    {
        let count = try bits.int(12, "\(field).NumEntries")
        var ranges: [ClosedRange<Int>] = []
        for index in 0..<count {
            let isRange = try bits.bool("\(field).Entry[\(index)].IsARange")
            let start = try bits.int(16, "\(field).Entry[\(index)].StartOrOnlyVendorId")
            let end = isRange ? try bits.int(16, "\(field).Entry[\(index)].EndVendorId") : start
            guard start >= 1, end >= start else {
                throw ConsentStringError(
                    .invalidField, "\(bits.name): \(field) entry \(index) is the range \(start)…\(end)")
            }
            ranges.append(start...end)
        }
        return ConsentIDSet(ranges: ranges)
    }
}
