import Foundation

/// Builds IAB TCF v2 TC strings for tests, field by field as the TCF v2 "Consent string and vendor list formats"
/// specification lays them out (core segment, then an optional disclosed-vendors segment), written here bit by bit
/// and independently of the library's decoder. Vendor sections are bitfields.
public struct TCFTestString: Sendable {
    /// Purposes consented to.
    public var purposeConsents: Set<Int> = []
    /// Purposes with legitimate interest transparency.
    public var purposeLegitimateInterests: Set<Int> = []
    /// Vendors with consent.
    public var vendorConsents: Set<Int> = []
    /// Vendors with legitimate interest.
    public var vendorLegitimateInterests: Set<Int> = []
    /// Special features opted in.
    public var specialFeatureOptIns: Set<Int> = []
    /// Purpose one treatment.
    public var purposeOneTreatment = false
    /// Publisher restrictions: (purpose, type 0/1/2, vendors).
    public var restrictions: [(purpose: Int, type: Int, vendors: [Int])] = []
    /// The disclosed-vendors segment, when present.
    public var disclosedVendors: Set<Int>? = nil

    /// An empty string's fields (nothing consented).
    public init() {}

    /// The TC string.
    public var encoded: String {
        var bits = BitWriter()
        bits.write(2, 6)  // Version
        bits.write(16_000_000_000, 36)  // Created (deciseconds)
        bits.write(16_000_000_000, 36)  // LastUpdated
        bits.write(7, 12)  // CmpId
        bits.write(1, 12)  // CmpVersion
        bits.write(1, 6)  // ConsentScreen
        bits.write(4, 6)  // ConsentLanguage "EN": E
        bits.write(13, 6)  // N
        bits.write(100, 12)  // VendorListVersion
        bits.write(5, 6)  // TcfPolicyVersion
        bits.write(0, 1)  // IsServiceSpecific
        bits.write(0, 1)  // UseNonStandardTexts
        bits.field(specialFeatureOptIns, 12)
        bits.field(purposeConsents, 24)
        bits.field(purposeLegitimateInterests, 24)
        bits.write(purposeOneTreatment ? 1 : 0, 1)
        bits.write(3, 6)  // PublisherCC "DE": D
        bits.write(4, 6)  // E
        bits.vendors(vendorConsents)
        bits.vendors(vendorLegitimateInterests)
        bits.write(restrictions.count, 12)
        for restriction in restrictions {
            bits.write(restriction.purpose, 6)
            bits.write(restriction.type, 2)
            bits.write(restriction.vendors.count, 12)
            for vendor in restriction.vendors {
                bits.write(0, 1)
                bits.write(vendor, 16)
            }
        }
        var text = bits.base64URL
        if let disclosedVendors {
            var segment = BitWriter()
            segment.write(1, 3)  // SegmentType: disclosed vendors
            segment.vendors(disclosedVendors)
            text += "." + segment.base64URL
        }
        return text
    }
}

/// Bits, most significant first, written out as unpadded base64url.
private struct BitWriter {
    var bits: [Bool] = []

    mutating func write(_ value: Int, _ width: Int) {
        for shift in stride(from: width - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
    }

    mutating func field(_ ids: Set<Int>, _ width: Int) {
        for id in 1...width { bits.append(ids.contains(id)) }
    }

    /// MaxVendorId, IsRangeEncoding 0, then the bitfield.
    mutating func vendors(_ ids: Set<Int>) {
        let maximum = ids.max() ?? 0
        write(maximum, 16)
        write(0, 1)
        if maximum > 0 { field(ids, maximum) }
    }

    var base64URL: String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var text = ""
        var index = 0
        while index < bits.count {
            var value = 0
            for offset in 0..<6 { value = (value << 1) | (index + offset < bits.count && bits[index + offset] ? 1 : 0) }
            text.append(alphabet[value])
            index += 6
        }
        return text
    }
}
