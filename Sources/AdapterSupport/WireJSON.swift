import AdMediation
import AdTransport
import AdapterKit
import Foundation

/// Codable decoding of outside JSON, written once: the body is checked against ``JSONLimits`` before any decoder sees
/// it, every optional field is read on its own (a value of the wrong type or out of range is absent, never a failure
/// of the whole answer), and a list keeps the elements that decode (``Lossy``).
package enum WireJSON {
    /// Decodes `T` from `body` after `limits`; `what` names the body in errors.
    package static func decode<T: Decodable>(
        _ type: T.Type, from body: Data, limits: JSONLimits = JSONLimits(), what: String
    ) throws(AdError) -> T {
        try WireCodec.decode(type, from: body, limits: limits, what: what)
    }
}

/// One element of a list, decoded on its own: an element that does not decode is `nil` and the others survive.
package struct Lossy<Element: Decodable>: Decodable {
    /// The element, when it decoded.
    package let value: Element?

    /// Never throws: a failure is a `nil` value.
    package init(from decoder: any Decoder) throws {
        value = try? Element(from: decoder)
    }
}

extension KeyedDecodingContainer {
    /// The string at `key`; nil when absent, null or not a string.
    package func string(_ key: Key) -> String? { (try? decodeIfPresent(String.self, forKey: key)) ?? nil }

    /// The boolean at `key`; nil when absent, null or not a boolean (numbers and strings are not booleans).
    package func bool(_ key: Key) -> Bool? { (try? decodeIfPresent(Bool.self, forKey: key)) ?? nil }

    /// The finite number at `key`; nil when absent, null, not a number (JSONDecoder reads no boolean or string as a
    /// number) or not representable as a finite `Double`.
    package func number(_ key: Key) -> Double? {
        guard let value = (try? decodeIfPresent(Double.self, forKey: key)) ?? nil else { return nil }
        return value.isFinite ? value : nil
    }

    /// The object at `key`; nil when absent or not an object.
    package func object<NestedKey: CodingKey>(_ key: Key, keyedBy: NestedKey.Type) -> KeyedDecodingContainer<NestedKey>?
    {
        guard contains(key), (try? decodeNil(forKey: key)) == false else { return nil }
        return try? nestedContainer(keyedBy: NestedKey.self, forKey: key)
    }

    /// The elements of the list at `key` that decode (nil when absent or not a list).
    package func lossyList<Element: Decodable>(_ key: Key, of type: Element.Type) -> [Element]? {
        ((try? decodeIfPresent([Lossy<Element>].self, forKey: key)) ?? nil).map { $0.compactMap(\.value) }
    }

    /// The strings of the list at `key` (other elements skipped); nil when absent or not a list.
    package func strings(_ key: Key) -> [String]? { lossyList(key, of: String.self) }
}

/// Coding keys made from any string, for wire objects read field by field.
package struct WireKey: CodingKey, ExpressibleByStringLiteral {
    /// The key.
    package let stringValue: String
    /// Never an index.
    package var intValue: Int? { nil }

    /// A key for `stringValue`.
    package init(stringValue: String) { self.stringValue = stringValue }
    /// Not used: wire objects have no integer keys.
    package init?(intValue: Int) { nil }
    /// `"ads"`.
    package init(stringLiteral value: String) { stringValue = value }
}
