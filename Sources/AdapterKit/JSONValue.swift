import Foundation

/// Any JSON value, typed and `Sendable` (what `JSONSerialization` gives is neither): for the parts of a wire answer a
/// network reads loosely (MARS's ad items), for wire fixtures, and for a report read back field by field. Prefer a
/// `Decodable` type of the answer's own shape (``WireCodec``); this is for when there is none.
///
/// Decoding never fails on well-formed JSON: a number no `Double` holds (`1e400`) reads as ``null``, as a field that
/// is not there would. Numbers are `Double`s, compared as numbers (`1` equals `1.0`). Bound the input first
/// (``WireCodec`` does): the value is as deep as the text.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// Any number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// The member `key` of an object; nil for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    /// The string; nil for anything else.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The number; nil for anything else.
    public var number: Double? { if case .number(let value) = self { value } else { nil } }
    /// The number when it is a whole number an `Int` holds; nil for anything else.
    public var integer: Int? { number.flatMap { Int(exactly: $0) } }
    /// The flag; nil for anything else.
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The elements; nil for anything else.
    public var array: [JSONValue]? { if case .array(let values) = self { values } else { nil } }
    /// The members; nil for anything else.
    public var object: [String: JSONValue]? { if case .object(let members) = self { members } else { nil } }
}

extension JSONValue: Codable {
    /// Decodes any JSON value. The kinds are tried from the most common in an answer (strings, then numbers and
    /// flags, then objects and arrays): each miss is a thrown `DecodingError`, the main cost of decoding.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let string = try? value.decode(String.self) {
            self = .string(string)
        } else if let number = try? value.decode(Double.self) {
            self = number.isFinite ? .number(number) : .null
        } else if let flag = try? value.decode(Bool.self) {
            self = .bool(flag)
        } else if let members = try? value.decode([String: JSONValue].self) {
            self = .object(members)
        } else if let elements = try? value.decode([JSONValue].self) {
            self = .array(elements)
        } else {
            self = .null  // a number no Double holds: what is left of well-formed JSON
        }
    }

    /// Encodes the value as the JSON it stands for.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text, object keys sorted by their UTF-8 bytes; a whole number under 10¹⁵ is written
    /// without a fraction (`2`, not `2.0`).
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let value):
            if value.rounded() == value, abs(value) < 1e15, let whole = Int64(exactly: value) { return String(whole) }
            return "\(value)"
        case .string(let value): return Self.quoted(value)
        case .array(let values): return "[" + values.map(\.description).joined(separator: ",") + "]"
        case .object(let members):
            let fields = members.keys.sorted().map { key in
                Self.quoted(key) + ":" + (members[key] ?? .null).description
            }
            return "{" + fields.joined(separator: ",") + "}"
        }
    }

    /// `text` as a JSON string literal.
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += "\\u00" + String(scalar.value >> 4, radix: 16) + String(scalar.value & 0xF, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// Literals, for bodies written in code (a sandbox's answers, a test's fixture): `["ok": true, "n": 2]`. There is no
/// `nil` literal (it would read as an absent value): write ``JSONValue/null``.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A whole number.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A flag.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
