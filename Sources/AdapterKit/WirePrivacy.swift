import AdMediation
import Foundation

/// The privacy signals as the query-string and JSON contracts carry them (`gdpr`, `gdpr_consent`, `us_privacy`,
/// `gpp`, `gpp_sid`, `coppa`, and `tfua` where the contract has it), written once for every adapter.
public enum WirePrivacy {
    /// How a contract carries "under the age of consent".
    public enum UnderAge: Sendable {
        /// As its own `tfua=1` (AdMob's "tag for under age of consent").
        case tfua
        /// Folded into `coppa=1` (contracts without a separate flag).
        case coppa
    }

    /// One field's value.
    public enum Value: Sendable, Equatable {
        /// A number (`gdpr`, `coppa`, `tfua`).
        case int(Int)
        /// A string (`gdpr_consent`, `us_privacy`, `gpp`).
        case string(String)
        /// A list of section ids (`gpp_sid`).
        case ints([Int])

        /// The value in a query string (`gpp_sid` comma-separated).
        public var queryText: String {
            switch self {
            case .int(let value): String(value)
            case .string(let text): text
            case .ints(let values): values.map(String.init).joined(separator: ",")
            }
        }
    }

    /// The fields `privacy` sets, in a stable order; absent signals are left out.
    public static func fields(_ privacy: PrivacySignals, underAge: UnderAge) -> [(key: String, value: Value)] {
        var fields: [(key: String, value: Value)] = []
        if let gdpr = privacy.gdprApplies { fields.append(("gdpr", .int(gdpr ? 1 : 0))) }
        if let tcf = privacy.tcfConsent { fields.append(("gdpr_consent", .string(tcf))) }
        if let usp = privacy.usPrivacy { fields.append(("us_privacy", .string(usp))) }
        if let gpp = privacy.gpp { fields.append(("gpp", .string(gpp))) }
        if !privacy.gppSectionIDs.isEmpty { fields.append(("gpp_sid", .ints(privacy.gppSectionIDs))) }
        switch underAge {
        case .tfua:
            if privacy.coppa { fields.append(("coppa", .int(1))) }
            if privacy.underAgeOfConsent { fields.append(("tfua", .int(1))) }
        case .coppa:
            if privacy.coppa || privacy.underAgeOfConsent { fields.append(("coppa", .int(1))) }
        }
        return fields
    }

    /// The fields as query items.
    public static func query(_ privacy: PrivacySignals, underAge: UnderAge) -> [(String, String)] {
        fields(privacy, underAge: underAge).map { ($0.key, $0.value.queryText) }
    }

    /// The fields as a JSON object: numbers and lists typed, absent signals left out.
    public struct Object: Encodable, Sendable, Equatable {
        /// `gdpr`: 1 when GDPR applies, 0 when it does not.
        public var gdpr: Int?
        /// `gdpr_consent`: the TCF consent string.
        public var gdprConsent: String?
        /// `us_privacy`: the US Privacy string.
        public var usPrivacy: String?
        /// `gpp`: the GPP string.
        public var gpp: String?
        /// `gpp_sid`: the GPP section ids in force.
        public var gppSectionIDs: [Int]?
        /// `coppa`: 1 for a child-directed request (also under the age of consent, for contracts without `tfua`).
        public var coppa: Int?
        /// `tfua`: 1 when the user is under the age of consent.
        public var tfua: Int?

        /// No field set.
        public init() {}

        enum CodingKeys: String, CodingKey {
            case gdpr, gpp, coppa, tfua
            case gdprConsent = "gdpr_consent"
            case usPrivacy = "us_privacy"
            case gppSectionIDs = "gpp_sid"
        }

        /// No signal is set.
        public var isEmpty: Bool { self == Object() }
    }

    /// The fields as a JSON object (``Object/isEmpty`` when no signal is set).
    public static func object(_ privacy: PrivacySignals, underAge: UnderAge) -> Object {
        var object = Object()
        for field in fields(privacy, underAge: underAge) {
            switch (field.key, field.value) {
            case ("gdpr", .int(let value)): object.gdpr = value
            case ("gdpr_consent", .string(let text)): object.gdprConsent = text
            case ("us_privacy", .string(let text)): object.usPrivacy = text
            case ("gpp", .string(let text)): object.gpp = text
            case ("gpp_sid", .ints(let values)): object.gppSectionIDs = values
            case ("coppa", .int(let value)): object.coppa = value
            case ("tfua", .int(let value)): object.tfua = value
            default: continue
            }
        }
        return object
    }
}

/// Query strings, written once: every value is percent-encoded except RFC 3986's unreserved characters, so `&`, `=`,
/// `+`, `?`, `/`, `#` and spaces in a value can never change the query's meaning.
public enum QueryString {
    private static let unreserved: CharacterSet = {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        return allowed
    }()

    /// `text` with everything but unreserved characters percent-encoded.
    public static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// `a=1&b=x%20y`.
    public static func encode(_ items: [(String, String)]) -> String {
        items.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }

    /// `text` in `application/x-www-form-urlencoded` form, as the WHATWG URL standard (and Rust's `url` crate) writes
    /// it: ASCII letters, digits and `-._*` kept, a space as `+`, everything else percent-encoded. For contracts
    /// that append to URLs the way their reference client does (MARS callbacks).
    public static func formEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "*"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "): out += "+"
            default: out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// `a=1&b=x+y`, form-encoded.
    public static func formEncode(_ items: [(String, String)]) -> String {
        items.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
    }
}

/// Prices from a server, written once.
public enum WirePrice {
    /// `value` when it is a finite eCPM of 0…1 000 000; otherwise nil (the fill is then unpriced, never trapped on).
    public static func ecpm(_ value: Double?) -> Double? {
        guard let value, value.isFinite, value >= 0, value <= 1_000_000 else { return nil }
        return value
    }
}
