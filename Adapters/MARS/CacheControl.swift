import AdMediation
import AdapterSupport
import Foundation

/// `Cache-Control` directives the client reads.
package struct CacheControl {
    package var maxAge: Int64?
    package var noStore = false

    package init(_ header: String?) {
        guard let header else { return }
        for directive in header.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            if directive == "no-store" { noStore = true }
            // RFC 9111 delta-seconds: digits only; a value too large for Int64 is "very long" (the TTL rule caps it).
            if directive.hasPrefix("max-age=") {
                let digits = directive.dropFirst("max-age=".count)
                guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
                else { continue }
                maxAge = Int64(digits) ?? .max
            }
        }
    }
}

/// A JSON value that is `Sendable` (what `JSONSerialization` gives is not).
enum AnySendableJSON: Sendable, Hashable, Decodable {
    case string(String), number(Double), bool(Bool), array([AnySendableJSON]), object([String: AnySendableJSON])

    /// Decodes any JSON value; `null` members and elements, and numbers that are not finite, are left out (a
    /// non-finite number alone throws). The kinds are tried from the most common in an answer (strings, then numbers
    /// and booleans, then objects and arrays): each miss is a thrown `DecodingError`, the main cost of decoding.
    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if let string = try? value.decode(String.self) {
            self = .string(string)
        } else if let number = try? value.decode(Double.self) {
            guard number.isFinite else {
                throw DecodingError.dataCorruptedError(in: value, debugDescription: "not a finite number")
            }
            self = .number(number)
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let object = try? decoder.container(keyedBy: WireKey.self) {
            var members: [String: AnySendableJSON] = [:]
            for key in object.allKeys where (try? object.decodeNil(forKey: key)) == false {
                if let value = try? object.decode(AnySendableJSON.self, forKey: key) {
                    members[key.stringValue] = value
                }
            }
            self = .object(members)
        } else {
            var array = try decoder.unkeyedContainer()
            var elements: [AnySendableJSON] = []
            while !array.isAtEnd {
                if (try? array.decodeNil()) == true { continue }
                // Lossy always advances, so a bad element cannot stall the loop.
                if let value = try array.decode(Lossy<AnySendableJSON>.self).value { elements.append(value) }
            }
            self = .array(elements)
        }
    }

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var number: Double? { if case .number(let n) = self { n } else { nil } }
    var object: [String: AnySendableJSON]? { if case .object(let o) = self { o } else { nil } }
}
