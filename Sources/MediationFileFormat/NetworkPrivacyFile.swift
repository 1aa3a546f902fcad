import AdMediation
import AdTransport

/// The privacy keys every network entry of the configuration file may carry besides its `type`, `base_url` and its
/// type's own settings (docs/CONFIG.md): `tcf_vendor_id`, the network's id in the IAB Global Vendor List. With it, the
/// privacy rules check the user's TCF consent for this vendor (vendor consent, legitimate interest, publisher
/// restrictions, disclosed vendors) as well as for the purposes; without it, the purposes alone
/// (`PrivacyConfiguration.tcfVendorIDs`).
public struct NetworkPrivacySettings: Codable, Hashable, Sendable {
    /// The keys, as the file spells them.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case tcfVendorID = "tcf_vendor_id"
    }

    /// The highest vendor id a TC string can name (its vendor fields are 16 bits, TCF v2 core segment).
    public static let maxTCFVendorID = 65_535

    /// `tcf_vendor_id`: the network's Global Vendor List id, 1…65535 (nil: not declared).
    public var tcfVendorID: Int?

    /// Creates the settings.
    public init(tcfVendorID: Int? = nil) {
        self.tcfVendorID = tcfVendorID
    }

    /// Reads the keys from a network's object, ignoring its other keys (the caller checks those): `tcf_vendor_id`, when
    /// present, must be a whole number 1…65535; an error names its field path (`networks.cb.tcf_vendor_id: …`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard c.contains(.tcfVendorID) else {
            tcfVendorID = nil
            return
        }
        let range = 1...Self.maxTCFVendorID
        let expected = "must be a whole number \(range.lowerBound)…\(range.upperBound) (an IAB Global Vendor List id)"
        guard let number = try? c.decode(Double.self, forKey: .tcfVendorID) else {
            throw DecodingError.dataCorruptedError(forKey: .tcfVendorID, in: c, debugDescription: expected)
        }
        guard let id = OutsideValue.integer(number, in: range) else {
            let got = Int(exactly: number).map(String.init) ?? "\(number)"
            throw DecodingError.dataCorruptedError(
                forKey: .tcfVendorID, in: c, debugDescription: "\(expected), got \(got)")
        }
        tcfVendorID = id
    }

    /// Writes `tcf_vendor_id` when declared.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(tcfVendorID, forKey: .tcfVendorID)
    }
}
