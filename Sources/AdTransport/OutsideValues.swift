import Foundation

/// Checked conversions for values that come from outside the process: server answers, headers, files, SQLite rows
/// and configuration. Nothing here traps; a value that cannot be represented is `nil`, and the caller decides (and
/// documents per field) whether that makes the item invalid or falls back to a default.
public enum OutsideValue {
    /// The longest duration accepted from outside: 7 days. Longer values are clamped to it (see
    /// ``duration(seconds:maximum:)-(Double,_)``).
    public static let maximumDuration: Duration = .seconds(7 * 24 * 3600)

    /// Seconds from outside as a `Duration`.
    ///
    /// - Returns: `nil` for NaN, ±infinity and negative values; `maximum` for values at or above it; otherwise the
    ///   value rounded to the nanosecond.
    public static func duration(seconds: Double, maximum: Duration = maximumDuration) -> Duration? {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        if seconds >= maximum.seconds { return maximum }
        guard let nanoseconds = Int64(exactly: (seconds * 1e9).rounded()) else { return maximum }
        return .nanoseconds(nanoseconds)
    }

    /// Whole seconds from outside as a `Duration`: `nil` when negative, clamped to `maximum`.
    public static func duration(seconds: Int64, maximum: Duration = maximumDuration) -> Duration? {
        guard seconds >= 0 else { return nil }
        return duration(seconds: Double(seconds), maximum: maximum)
    }

    /// Whole seconds from outside, clamped to `0 ... maximum` (for stores that count in seconds): `nil` when the
    /// value is not finite or negative.
    public static func wholeSeconds(_ seconds: Double, maximum: Int64 = 7 * 24 * 3600) -> Int64? {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        if seconds >= Double(maximum) { return maximum }
        return Int64(exactly: seconds.rounded(.down)) ?? maximum
    }

    /// A JSON value (as `JSONSerialization` returns it) as a finite number; `nil` for booleans, strings, `null`,
    /// objects, arrays and non-finite numbers.
    public static func number(_ value: Any?) -> Double? {
        guard let value, !(value is NSNull), !(value is String) else { return nil }
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }

    /// A JSON value as an integer within `range`: `nil` unless it is a number, integral and in range.
    public static func integer(_ value: Any?, in range: ClosedRange<Int>) -> Int? {
        guard let double = number(value) else { return nil }
        return integer(double, in: range)
    }

    /// A double as an integer within `range`: `nil` unless it is finite, integral and in range.
    public static func integer(_ value: Double, in range: ClosedRange<Int>) -> Int? {
        guard value.isFinite, value == value.rounded(), value >= Double(range.lowerBound),
            value <= Double(range.upperBound),
            let exact = Int(exactly: value)
        else { return nil }
        return range.contains(exact) ? exact : nil
    }

    /// A decimal integer string (optional surrounding whitespace) within `range`; `nil` otherwise.
    public static func integer(_ text: String, in range: ClosedRange<Int>) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 20, let value = Int(trimmed), range.contains(value) else { return nil }
        return value
    }

    /// A JSON value as a boolean; `nil` for numbers, strings and every other type.
    public static func bool(_ value: Any?) -> Bool? {
        guard let value else { return nil }
        if let number = value as? NSNumber { return isBoolean(number) ? number.boolValue : nil }
        return value as? Bool
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        // Foundation on Linux and on Apple platforms both keep JSON's true/false as a distinct boolean NSNumber.
        let objCType = String(cString: number.objCType)
        return objCType == "c" || objCType == "B"
    }
}

/// Limits a JSON body must respect before it is decoded, so that a hostile answer can neither exhaust the stack
/// (deep nesting) nor memory and time (huge strings, huge arrays). ``violation(in:)`` (and the core's `check(_:_:)`,
/// which throws it as an `AdError`) scans the bytes once, without recursion, before any decoder sees them.
public struct JSONLimits: Sendable, Hashable {
    /// The largest body, in bytes. Default 4 MiB.
    public var maxBytes: Int = 4 << 20
    /// The deepest nesting of objects and arrays. Default 32.
    public var maxDepth: Int = 32
    /// The longest string (key or value), in bytes as encoded. Default 256 KiB.
    public var maxStringBytes: Int = 256 << 10
    /// The most items in one array or members in one object. Default 10 000.
    public var maxItems: Int = 10_000

    /// The default limits.
    public init() {}

    /// Creates limits.
    public init(maxBytes: Int, maxDepth: Int, maxStringBytes: Int, maxItems: Int) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
        self.maxStringBytes = maxStringBytes
        self.maxItems = maxItems
    }

    /// The first limit `data` breaks, named (`"nesting deeper than 32 levels"`), or `nil` when it respects all of
    /// them. Malformed JSON is not reported here; the decoder reports it.
    public func violation(in data: Data) -> String? {
        if data.count > maxBytes { return "a body of \(data.count) bytes is over the limit of \(maxBytes) bytes" }
        return data.withUnsafeBytes { raw -> String? in
            var counts: [Int] = []  // items per open container; counts.count is the depth
            counts.reserveCapacity(min(maxDepth, 64))
            var inString = false, escaped = false, stringStart = 0, awaitingFirst = false
            for (index, byte) in raw.enumerated() {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                        if index - stringStart > maxStringBytes {
                            return
                                "a string of \(index - stringStart) bytes is over the limit of \(maxStringBytes) bytes"
                        }
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if awaitingFirst, !counts.isEmpty { counts[counts.count - 1] = 1 }
                    if counts.count >= maxDepth { return "nesting deeper than \(maxDepth) levels" }
                    counts.append(0)
                    awaitingFirst = true
                    continue
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if !counts.isEmpty { counts.removeLast() }
                    awaitingFirst = false
                    continue
                case UInt8(ascii: ","):
                    if !counts.isEmpty {
                        counts[counts.count - 1] += 1
                        if counts[counts.count - 1] > maxItems {
                            return "more than \(maxItems) items in one array or object"
                        }
                    }
                    continue
                case UInt8(ascii: "\""):
                    inString = true
                    stringStart = index + 1
                default:
                    break
                }
                if awaitingFirst, !counts.isEmpty { counts[counts.count - 1] = 1 }
                awaitingFirst = false
            }
            if inString, raw.count - stringStart > maxStringBytes {
                return "a string of \(raw.count - stringStart) bytes is over the limit of \(maxStringBytes) bytes"
            }
            return nil
        }
    }
}
