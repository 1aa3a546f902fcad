/// Lower-case hexadecimal, as signatures and cache keys are written.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as two lower-case hex digits each (what `String(format: "%02x")` per byte gives, without formatting).
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Random request identifiers.
public enum RandomID {
    /// A random (version 4) UUID in lower case, `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`, from the system generator
    /// (`getrandom`). Foundation's `UUID()` on Linux opens `/dev/urandom` and formats with `snprintf` per call, which
    /// showed in profiles of one id per ad request.
    public static func uuidString() -> String {
        var bytes = randomBytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        let hex = Hex.encode(bytes)
        var text = ""
        text.reserveCapacity(36)
        for (index, character) in hex.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { text.append("-") }
            text.append(character)
        }
        return text
    }

    /// `count` bytes from the system generator (`getrandom`), written in lower-case hex: a token.
    public static func hex(byteCount count: Int) -> String {
        Hex.encode(randomBytes(count))
    }

    private static func randomBytes(_ count: Int) -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            let bits = random.next() as UInt64
            for i in 0..<min(8, count - bytes.count) { bytes.append(UInt8(truncatingIfNeeded: bits >> (i * 8))) }
        }
        return bytes
    }
}
