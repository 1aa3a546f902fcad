import Foundation

/// Writes the values `JSONSerialization` takes (dictionaries with `String` keys, arrays, `String`, `Bool`, `Int`,
/// `Double`, `NSNull`) straight into bytes, keys sorted, slashes not escaped: the output of
/// `JSONSerialization.data(withJSONObject:options: [.sortedKeys, .withoutEscapingSlashes])` for the values this project
/// writes, at a fraction of the cost. Foundation's sorted keys compare every pair with a locale-aware string
/// comparison, which made it a fifth of `mediate compare`'s CPU, spread over the sandbox's answers and the request
/// bodies the adapters write.
///
/// Keys are ordered as Foundation orders ASCII keys: case-insensitively, punctuation before digits before letters,
/// lower case first on a tie. Keys with other characters come after those letters, by their UTF-8 bytes (Foundation
/// orders them by locale); every key this project writes is ASCII. Numbers are written as Foundation writes them
/// (`1` for `1.0`, `1e-05`, `1e+22`).
public enum JSONWriter {
    /// The JSON text of `value`. A value holding another type (another integer width, `NSNumber`, …) is left to
    /// `JSONSerialization` with the same options; nil when neither can write it (a non-finite number, say).
    public static func data(_ value: Any) -> Data? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        guard write(value, into: &bytes, depth: 0) else {
            return try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        }
        return Data(bytes)
    }

    /// Deeper than this is refused (the values are the project's own; this only bounds a mistake).
    static let maxDepth = 64

    private static func write(_ value: Any, into bytes: inout [UInt8], depth: Int) -> Bool {
        guard depth <= maxDepth else { return false }
        switch value {
        case let string as String:
            writeString(string, into: &bytes)
        case let object as [String: Any]:
            bytes.append(UInt8(ascii: "{"))
            for (position, key) in object.keys.sorted(by: precedes).enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                guard let element = object[key], write(element, into: &bytes, depth: depth + 1) else { return false }
            }
            bytes.append(UInt8(ascii: "}"))
        case let array as [Any]:
            bytes.append(UInt8(ascii: "["))
            for (position, element) in array.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                guard write(element, into: &bytes, depth: depth + 1) else { return false }
            }
            bytes.append(UInt8(ascii: "]"))
        case is NSNull:
            bytes.append(contentsOf: "null".utf8)
        default:
            return writeScalar(value, into: &bytes)
        }
        return true
    }

    /// Booleans and numbers, by their exact type (a cast alone would turn `1` into `true` through `NSNumber`).
    private static func writeScalar(_ value: Any, into bytes: inout [UInt8]) -> Bool {
        let type = Swift.type(of: value)
        if type == Bool.self, let flag = value as? Bool {
            bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        } else if type == Int.self, let number = value as? Int {
            bytes.append(contentsOf: String(number).utf8)
        } else if type == Double.self, let number = value as? Double {
            guard number.isFinite else { return false }
            var text = String(number)
            if text.hasSuffix(".0") { text.removeLast(2) }
            bytes.append(contentsOf: text.utf8)
        } else {
            return false
        }
        return true
    }

    private static func writeString(_ string: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
            case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Foundation's order for ASCII keys (see the type's comment); other bytes by value, after ASCII.
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        var caseTie = 0  // < 0: lhs has the lower-case letter at the first case-only difference
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return caseTie < 0
            case (nil, _): return true
            case (_, nil): return false
            case (let l?, let r?):
                let (lr, rr) = (rank(l), rank(r))
                if lr != rr { return lr < rr }
                if caseTie == 0 && l != r { caseTie = l > r ? -1 : 1 }
            }
        }
    }

    /// Punctuation (and controls) < digits < letters (case folded) < other bytes.
    private static func rank(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): 0x100 + Int(byte)
        case UInt8(ascii: "a")...UInt8(ascii: "z"): 0x200 + Int(byte)
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): 0x200 + Int(byte) + 0x20
        case 0x80...: 0x300 + Int(byte)
        default: Int(byte)
        }
    }
}
