import Foundation

/// Why a binary HTTP message or an Oblivious HTTP encapsulation could not be read or made.
public struct ObliviousHTTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        /// A binary HTTP message is malformed (a length past the end, a bad varint, non-zero padding, …).
        public static let malformedMessage = Code(name: "malformed_message")
        /// A binary HTTP framing this implementation does not read (indefinite-length).
        public static let unsupportedFraming = Code(name: "unsupported_framing")
        /// A key configuration is malformed or offers no suite this client supports.
        public static let badKeyConfiguration = Code(name: "bad_key_configuration")
        /// An encapsulated request names a key id the gateway does not have (RFC 9458 §5.3: refetch the keys).
        public static let unknownKey = Code(name: "unknown_key")
        /// An encapsulated message does not decrypt (wrong key, altered or truncated ciphertext).
        public static let decryptionFailed = Code(name: "decryption_failed")
        /// A message is over the size limit.
        public static let tooLarge = Code(name: "too_large")
        /// The code's name, as it appears in messages.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// What was wrong, naming the field or value at fault.
    public var message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}

/// One field line of a binary HTTP message (names are lower-case on the wire, as in HTTP/2 and HTTP/3).
public struct BinaryHTTPField: Sendable, Hashable {
    /// The field name.
    public var name: String
    /// The field value.
    public var value: String

    /// A field line.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// An HTTP request in the known-length binary format of RFC 9292 (`message/bhttp`).
public struct BinaryHTTPRequest: Sendable, Hashable {
    /// The method, e.g. `GET`.
    public var method: String
    /// The scheme, e.g. `https`.
    public var scheme: String
    /// The authority (host and port); may be empty.
    public var authority: String
    /// The path and query, e.g. `/v1/ads?x=1`.
    public var path: String
    /// The header fields, in order.
    public var headers: [BinaryHTTPField]
    /// The content.
    public var content: Data
    /// The trailer fields.
    public var trailers: [BinaryHTTPField]

    /// A request.
    public init(
        method: String, scheme: String, authority: String, path: String, headers: [BinaryHTTPField] = [],
        content: Data = Data(), trailers: [BinaryHTTPField] = []
    ) {
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.headers = headers
        self.content = content
        self.trailers = trailers
    }

    /// The known-length encoding (framing indicator 0), untruncated and unpadded.
    public func encoded() -> Data {
        var out = Data()
        BinaryHTTPWire.appendVarint(0, to: &out)
        for part in [method, scheme, authority, path] { BinaryHTTPWire.appendBytes(Data(part.utf8), to: &out) }
        BinaryHTTPWire.appendSections(headers: headers, content: content, trailers: trailers, to: &out)
        return out
    }

    /// Reads a known-length request; a message truncated after any complete section, or followed by zero padding,
    /// is accepted (RFC 9292 §3.8). At most `maxBytes` are read.
    public init(decoding data: Data, maxBytes: Int = 8 << 20) throws(ObliviousHTTPError) {
        var reader = try BinaryHTTPWire.Reader(data, maxBytes: maxBytes)
        let framing = try reader.varint("framing indicator")
        guard framing == 0 else {
            throw ObliviousHTTPError(
                framing == 2 ? .unsupportedFraming : .malformedMessage,
                "framing indicator \(framing) is not a known-length request (0)")
        }
        method = try reader.string("method")
        scheme = try reader.string("scheme")
        authority = try reader.string("authority")
        path = try reader.string("path")
        (headers, content, trailers) = try reader.sections()
    }
}

/// An HTTP response in the known-length binary format of RFC 9292.
public struct BinaryHTTPResponse: Sendable, Hashable {
    /// An informational (1xx) response before the final one.
    public struct Informational: Sendable, Hashable {
        /// 100…199.
        public var status: Int
        /// Its fields.
        public var headers: [BinaryHTTPField]

        /// An informational response.
        public init(status: Int, headers: [BinaryHTTPField] = []) {
            self.status = status
            self.headers = headers
        }
    }

    /// Informational responses, in order.
    public var informational: [Informational]
    /// The final status, 200…599.
    public var status: Int
    /// The header fields.
    public var headers: [BinaryHTTPField]
    /// The content.
    public var content: Data
    /// The trailer fields.
    public var trailers: [BinaryHTTPField]

    /// A response.
    public init(
        status: Int, headers: [BinaryHTTPField] = [], content: Data = Data(), trailers: [BinaryHTTPField] = [],
        informational: [Informational] = []
    ) {
        self.status = status
        self.headers = headers
        self.content = content
        self.trailers = trailers
        self.informational = informational
    }

    /// The known-length encoding (framing indicator 1), untruncated and unpadded.
    public func encoded() -> Data {
        var out = Data()
        BinaryHTTPWire.appendVarint(1, to: &out)
        for interim in informational {
            BinaryHTTPWire.appendVarint(UInt64(clamping: interim.status), to: &out)
            BinaryHTTPWire.appendFields(interim.headers, to: &out)
        }
        BinaryHTTPWire.appendVarint(UInt64(clamping: status), to: &out)
        BinaryHTTPWire.appendSections(headers: headers, content: content, trailers: trailers, to: &out)
        return out
    }

    /// Reads a known-length response (truncation and zero padding accepted, as for requests).
    public init(decoding data: Data, maxBytes: Int = 8 << 20) throws(ObliviousHTTPError) {
        var reader = try BinaryHTTPWire.Reader(data, maxBytes: maxBytes)
        let framing = try reader.varint("framing indicator")
        guard framing == 1 else {
            throw ObliviousHTTPError(
                framing == 3 ? .unsupportedFraming : .malformedMessage,
                "framing indicator \(framing) is not a known-length response (1)")
        }
        var informational: [Informational] = []
        var status = try reader.varint("status")
        while (100...199).contains(status) {
            guard informational.count < 64 else {
                throw ObliviousHTTPError(.malformedMessage, "more than 64 informational responses")
            }
            informational.append(Informational(status: Int(status), headers: try reader.fields("informational fields")))
            status = try reader.varint("status")
        }
        guard (200...599).contains(status) else {
            throw ObliviousHTTPError(.malformedMessage, "status \(status) is not 200…599")
        }
        self.informational = informational
        self.status = Int(status)
        (headers, content, trailers) = try reader.sections()
    }
}

/// The RFC 9292 wire primitives: QUIC variable-length integers (RFC 9000 §16) and length-prefixed sections.
enum BinaryHTTPWire {
    static let maxFieldLines = 1000

    static func appendVarint(_ value: UInt64, to out: inout Data) {
        switch value {
        case 0..<(1 << 6): out.append(UInt8(value))
        case 0..<(1 << 14): out.append(contentsOf: [UInt8(0x40 | (value >> 8)), UInt8(value & 0xff)])
        case 0..<(1 << 30):
            let word = UInt32(value) | 0x8000_0000
            out.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> $0) })
        default:
            let word = min(value, (1 << 62) - 1) | 0xc000_0000_0000_0000
            out.append(
                contentsOf: [56, 48, 40, 32, 24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt64($0)) })
        }
    }

    static func appendBytes(_ bytes: Data, to out: inout Data) {
        appendVarint(UInt64(bytes.count), to: &out)
        out.append(bytes)
    }

    /// The header section, content and trailer section that end every known-length message.
    static func appendSections(
        headers: [BinaryHTTPField], content: Data, trailers: [BinaryHTTPField], to out: inout Data
    ) {
        appendFields(headers, to: &out)
        appendBytes(content, to: &out)
        appendFields(trailers, to: &out)
    }

    static func appendFields(_ fields: [BinaryHTTPField], to out: inout Data) {
        var section = Data()
        for field in fields {
            appendBytes(Data(field.name.lowercased().utf8), to: &section)
            appendBytes(Data(field.value.utf8), to: &section)
        }
        appendBytes(section, to: &out)
    }

    /// A bounds-checked reader: every length is checked against what is left before it is used.
    struct Reader {
        private let bytes: [UInt8]
        private var offset = 0

        init(_ data: Data, maxBytes: Int) throws(ObliviousHTTPError) {
            guard data.count <= maxBytes else {
                throw ObliviousHTTPError(.tooLarge, "message of \(data.count) bytes is over \(maxBytes)")
            }
            bytes = [UInt8](data)
        }

        private init(slice: ArraySlice<UInt8>) {
            bytes = Array(slice)
        }

        var isAtEnd: Bool { offset >= bytes.count }

        /// True at the end, or where only zero padding is left (a truncated message ends there).
        /// (A zero where a section's length is due means an empty section, so zeros to the end mean the same.)
        var isAtPaddingOrEnd: Bool { bytes[offset...].allSatisfy { $0 == 0 } }

        mutating func varint(_ what: String) throws(ObliviousHTTPError) -> UInt64 {
            guard offset < bytes.count else {
                throw ObliviousHTTPError(.malformedMessage, "\(what): message ends before it")
            }
            let length = 1 << Int(bytes[offset] >> 6)
            guard bytes.count - offset >= length else {
                throw ObliviousHTTPError(.malformedMessage, "\(what): varint runs past the end")
            }
            var value = UInt64(bytes[offset] & 0x3f)
            for index in 1..<length { value = value << 8 | UInt64(bytes[offset + index]) }
            offset += length
            return value
        }

        mutating func bytes(_ what: String) throws(ObliviousHTTPError) -> Data {
            let length = try varint("\(what) length")
            guard length <= UInt64(bytes.count - offset) else {
                throw ObliviousHTTPError(
                    .malformedMessage, "\(what): length \(length) runs past the end (\(bytes.count - offset) left)")
            }
            let start = offset
            offset += Int(length)
            return Data(bytes[start..<offset])
        }

        mutating func string(_ what: String) throws(ObliviousHTTPError) -> String {
            let raw = try bytes(what)
            guard let text = String(data: raw, encoding: .utf8) else {
                throw ObliviousHTTPError(.malformedMessage, "\(what) is not UTF-8")
            }
            return text
        }

        mutating func fields(_ what: String) throws(ObliviousHTTPError) -> [BinaryHTTPField] {
            var section = Reader(slice: try [UInt8](bytes(what))[...])
            var fields: [BinaryHTTPField] = []
            while !section.isAtEnd {
                guard fields.count < BinaryHTTPWire.maxFieldLines else {
                    throw ObliviousHTTPError(
                        .malformedMessage, "\(what): more than \(BinaryHTTPWire.maxFieldLines) field lines")
                }
                let name = try section.string("\(what) field name")
                guard !name.isEmpty, name == name.lowercased() else {
                    throw ObliviousHTTPError(
                        .malformedMessage, "\(what): field name \"\(name)\" is empty or not lower-case")
                }
                fields.append(BinaryHTTPField(name, try section.string("\(what) value of \(name)")))
            }
            return fields
        }

        /// The header section, content and trailer section, each empty when the message was truncated before it,
        /// then the check that only zero padding follows.
        mutating func sections() throws(ObliviousHTTPError) -> ([BinaryHTTPField], Data, [BinaryHTTPField]) {
            let headers = isAtPaddingOrEnd ? [] : try fields("header section")
            let content = isAtPaddingOrEnd ? Data() : try bytes("content")
            let trailers = isAtPaddingOrEnd ? [] : try fields("trailer section")
            try expectPadding()
            return (headers, content, trailers)
        }

        /// Whatever follows the message must be zero padding.
        func expectPadding() throws(ObliviousHTTPError) {
            guard bytes[offset...].allSatisfy({ $0 == 0 }) else {
                throw ObliviousHTTPError(
                    .malformedMessage, "\(bytes.count - offset) bytes after the message are not zero padding")
            }
        }
    }
}
