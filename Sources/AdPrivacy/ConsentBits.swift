/// Why a consent string (TCF, GPP, US Privacy) or a stored consent value could not be read.
public struct ConsentStringError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of fault it is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable name (`too_long`, `invalid_character`, …).
        public let name: String
        /// Longer than the decoder's cap.
        public static let tooLong = Code(name: "too_long")
        /// Empty where a value is needed.
        public static let empty = Code(name: "empty")
        /// A character outside the string's alphabet.
        public static let invalidCharacter = Code(name: "invalid_character")
        /// The bits ended inside a field.
        public static let truncated = Code(name: "truncated")
        /// A version this decoder does not read.
        public static let unsupportedVersion = Code(name: "unsupported_version")
        /// A field holds a value its specification forbids.
        public static let invalidField = Code(name: "invalid_field")
        /// More entries than the decoder's cap.
        public static let tooManyEntries = Code(name: "too_many_entries")
        /// The name.
        public var description: String { name }
    }

    /// What kind of fault it is.
    public var code: Code
    /// What is wrong, naming the field.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.name): \(message)" }
}

/// A set of small positive ids (vendors, purposes, sections) kept as sorted, disjoint ranges, so a range entry of a
/// consent string (`1…65535`) costs one element, not 65 535.
public struct ConsentIDSet: Hashable, Sendable, CustomStringConvertible {
    /// The ranges, sorted, disjoint and not adjacent.
    public private(set) var ranges: [ClosedRange<Int>]

    /// The empty set.
    public init() { ranges = [] }

    /// A set holding `ids`.
    public init<S: Sequence>(_ ids: S) where S.Element == Int {
        self.init(ranges: ids.map { $0...$0 })
    }

    /// A set holding every id of `ranges` (in any order, overlapping or not): sorted and merged once,
    /// O(n log n), so hostile input with thousands of entries costs no more than sorting them.
    init(ranges unsorted: [ClosedRange<Int>]) {
        var merged: [ClosedRange<Int>] = []
        merged.reserveCapacity(unsorted.count)
        for range in unsorted.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound + 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        ranges = merged
    }

    /// Whether `id` is in the set.
    public func contains(_ id: Int) -> Bool {
        var low = 0
        var high = ranges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < id {
                low = middle + 1
            } else if ranges[middle].lowerBound > id {
                high = middle - 1
            } else {
                return true
            }
        }
        return false
    }

    /// How many ids the set holds.
    public var count: Int { ranges.reduce(0) { $0 + $1.count } }

    /// True when the set holds no id.
    public var isEmpty: Bool { ranges.isEmpty }

    /// Every id, ascending (at most 65 535 for the sets a consent string can hold).
    public var ids: [Int] { ranges.flatMap { Array($0) } }

    /// `[1, 2, 4…9]`.
    public var description: String {
        "["
            + ranges.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)…\($0.upperBound)" }
            .joined(separator: ", ") + "]"
    }

    /// Appends a range that lies above every range already held, not overlapping (bitfields read in order).
    mutating func append(_ range: ClosedRange<Int>) {
        if let last = ranges.last, last.upperBound + 1 == range.lowerBound {
            ranges[ranges.count - 1] = last.lowerBound...range.upperBound
        } else {
            ranges.append(range)
        }
    }
}

/// Reads big-endian bit fields from the bytes of a base64url text, never past its end (every read checks).
struct ConsentBitReader {
    private let bits: [UInt8]
    private(set) var position = 0
    /// Names the string in errors (`TCF core segment`).
    let name: String

    /// The bits of `text` in the URL-safe base64 alphabet (`=` padding ignored, as the IAB's decoders do).
    init(base64URL text: Substring, name: String) throws(ConsentStringError) {
        self.name = name
        var bits: [UInt8] = []
        bits.reserveCapacity(text.utf8.count * 6)
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"), UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "_"), UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): continue
            default:
                throw ConsentStringError(
                    .invalidCharacter, "\(name): a character outside base64url (byte \(byte))")
            }
            for shift in stride(from: 5, through: 0, by: -1) { bits.append((value >> UInt8(shift)) & 1) }
        }
        self.bits = bits
    }

    /// Bits not yet read.
    var remaining: Int { bits.count - position }

    /// An unsigned integer of `width` bits (at most 36).
    mutating func int(_ width: Int, _ field: String) throws(ConsentStringError) -> Int {
        guard width <= remaining else {
            throw ConsentStringError(.truncated, "\(name): the bits end inside \(field)")
        }
        var value = 0
        for _ in 0..<width {
            value = (value << 1) | Int(bits[position])
            position += 1
        }
        return value
    }

    /// One bit as a flag.
    mutating func bool(_ field: String) throws(ConsentStringError) -> Bool {
        try int(1, field) == 1
    }

    /// A bitfield of `count` bits: bit i (from 0) set means id i + 1.
    mutating func bitfield(_ count: Int, _ field: String) throws(ConsentStringError) -> ConsentIDSet {
        guard count <= remaining else {
            throw ConsentStringError(.truncated, "\(name): the bits end inside \(field)")
        }
        var set = ConsentIDSet()
        var runStart: Int?
        for index in 0..<count {
            let on = bits[position + index] == 1
            if on, runStart == nil { runStart = index + 1 }
            if !on, let start = runStart {
                set.append(start...index)
                runStart = nil
            }
        }
        if let start = runStart { set.append(start...count) }
        position += count
        return set
    }

    /// Two letters, 6 bits each (`A` = 0).
    mutating func letters(_ field: String) throws(ConsentStringError) -> String {
        let first = try int(6, field)
        let second = try int(6, field)
        guard first < 26, second < 26 else {
            throw ConsentStringError(.invalidField, "\(name): \(field) is not two letters A–Z")
        }
        return String(decoding: [UInt8(65 + first), UInt8(65 + second)], as: UTF8.self)
    }

    /// A Fibonacci-coded positive integer (GPP): bits for 1, 2, 3, 5, 8, … ending with two ones in a row, at most
    /// 40 bits (values far beyond any id).
    mutating func fibonacci(_ field: String) throws(ConsentStringError) -> Int {
        var (previous, current) = (1, 1)
        var value = 0
        var lastWasOne = false
        for _ in 0..<40 {
            let bit = try int(1, field)
            if bit == 1, lastWasOne { return value }
            (previous, current) = (current, previous + current)
            if bit == 1 { value += previous }
            lastWasOne = bit == 1
        }
        throw ConsentStringError(.invalidField, "\(name): \(field) is not a Fibonacci code of at most 40 bits")
    }
}
