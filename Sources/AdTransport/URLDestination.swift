/// What kind of network a URL's host is, decided from the URL's text alone (names are not resolved).
public enum DestinationClass: String, Sendable, Hashable, CaseIterable {
    /// A name other than `localhost`, or a public IP address.
    case `public`
    /// `localhost`, `*.localhost`, `127.0.0.0/8`, `::1`.
    case loopback
    /// `10/8`, `172.16/12`, `192.168/16`, `100.64/10` (shared address space), `fc00::/7`, `fec0::/10`.
    case `private`
    /// `169.254/16`, `fe80::/10`.
    case linkLocal = "link_local"
    /// `0.0.0.0/8` ("this host": Linux connects it to the local machine), `::`.
    case unspecified
    /// Multicast, broadcast and the other addresses no request should go to (`224/4`, `240/4`, `ff00::/8`).
    case reserved
}

/// Where an absolute `http`/`https` URL points: scheme, host, port and the host's class.
///
/// Parsed by hand, the way libcurl and `getaddrinfo` read a URL, so a check and the request agree: IPv4 addresses
/// in every form `inet_aton` accepts (`2130706433`, `0x7f.1`, `0177.0.0.1`) and IPv6 literals (`[::1]`,
/// `[::ffff:127.0.0.1]`) are recognised as addresses, never compared as strings.
public struct URLDestination: Sendable, Hashable {
    /// `http` or `https`, lower-cased.
    public var scheme: String
    /// The host, lower-cased, without a trailing dot; an IP address in its canonical text (IPv6 without brackets).
    public var host: String
    /// The port: explicit, or the scheme's default.
    public var port: Int
    /// The host's class.
    public var destinationClass: DestinationClass
    /// The host is an IP address (in any form).
    public var isAddress: Bool
    /// The host is an IP address written in a form other than its usual one (IPv4 not in four decimal parts, with
    /// leading zeros, hex or octal; IPv6 carrying an IPv4-mapped or -compatible address): such forms exist mostly to
    /// slip past checks and are refused by every policy.
    public var isOddAddressForm: Bool

    /// `scheme://host:port` (IPv6 in brackets), the unit credentials and redirects are compared by.
    public var origin: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(shown):\(port)"
    }

    /// Parses an absolute `http`/`https` URL. Throws ``DestinationRefusal`` with `invalidURL` for anything that is
    /// not one (spaces, control characters, backslashes, an empty or malformed host or port, a zone id), `scheme`
    /// for another scheme and `credentialsInURL` for a user name or password in the URL.
    public init(parsing url: String) throws(DestinationRefusal) {
        let bytes = Array(url.utf8)
        guard !bytes.isEmpty, bytes.count <= 16 << 10 else { throw .init(.invalidURL, "the URL is empty or too long") }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
            throw .init(.invalidURL, "not an absolute URL")
        }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        guard scheme.utf8.allSatisfy(Self.isSchemeByte), let first = scheme.utf8.first, Self.isLetter(first) else {
            throw .init(.invalidURL, "not an absolute URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw .init(.scheme, "the scheme \(DestinationRefusal.printable(scheme)): is not allowed")
        }
        guard bytes.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "\\") }) else {
            throw .init(.invalidURL, "the URL contains a space, a control character or a backslash")
        }
        let rest = bytes[(colon + 1)...]
        guard rest.starts(with: "//".utf8) else { throw .init(.invalidURL, "no //host after \(scheme):") }
        let authorityStart = rest.startIndex + 2
        let authorityEnd =
            rest[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == 0x23 }
            ?? rest.endIndex
        let authority = Array(rest[authorityStart..<authorityEnd])
        guard !authority.contains(UInt8(ascii: "@")) else {
            throw .init(.credentialsInURL, "a user name or password in the URL is not allowed")
        }
        var hostBytes: ArraySlice<UInt8>
        var portBytes: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw .init(.invalidURL, "an IPv6 address without its closing ]")
            }
            hostBytes = authority[1..<close]
            let after = authority[(close + 1)...]
            if let mark = after.first {
                guard mark == UInt8(ascii: ":") else { throw .init(.invalidURL, "text after the IPv6 address") }
                portBytes = after.dropFirst()
            }
        } else if let mark = authority.firstIndex(of: UInt8(ascii: ":")) {
            hostBytes = authority[..<mark]
            portBytes = authority[(mark + 1)...]
        } else {
            hostBytes = authority[...]
        }
        var port = scheme == "https" ? 443 : 80
        if let portBytes, !portBytes.isEmpty {
            guard portBytes.count <= 5, portBytes.allSatisfy(Self.isDigit),
                let value = Int(String(decoding: portBytes, as: UTF8.self)), (1...65535).contains(value)
            else { throw .init(.invalidURL, "the port is not a number 1…65535") }
            port = value
        }
        self.scheme = scheme
        self.port = port
        if authority.first == UInt8(ascii: "[") {
            guard let address = IPv6Address(hostBytes) else {
                throw .init(.invalidURL, "not a valid IPv6 address (zone ids are refused)")
            }
            host = address.text
            destinationClass = address.destinationClass
            isOddAddressForm = address.isOddForm
            isAddress = true
            return
        }
        // International names are refused in their Unicode form: the HTTP stacks map them (UTS #46) before they
        // resolve them, and the mapping turns full-width digits and dots, circled digits and other look-alikes into
        // other hosts (`１２７．０．０．１` is 127.0.0.1). Written in their ASCII form (`xn--…`) they are judged as
        // any name.
        if hostBytes.contains(where: { $0 >= 0x80 }) {
            throw .init(
                .invalidURL,
                "the host has non-ASCII characters: write an international name in its ASCII (xn--) form")
        }
        let trailingDot = hostBytes.last == UInt8(ascii: ".")
        if trailingDot { hostBytes.removeLast() }
        let name = String(decoding: hostBytes, as: UTF8.self).lowercased()
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard !name.isEmpty, labels.allSatisfy({ !$0.isEmpty }), hostBytes.allSatisfy(Self.isHostByte) else {
            throw .init(.invalidURL, "the host is empty, has an empty label or a character no host name has")
        }
        // As WHATWG URL and getaddrinfo read it: a host whose last label is a number is an IPv4 address.
        if let last = labels.last?.utf8.first, Self.isDigit(last) {
            guard let address = IPv4Address(inetAton: name) else {
                let shown = DestinationRefusal.printable(name)
                throw .init(.invalidURL, "the host \(shown) is neither a name nor an address")
            }
            host = address.text
            destinationClass = address.destinationClass
            isOddAddressForm = address.text != name || trailingDot
            isAddress = true
            return
        }
        host = name
        destinationClass = name == "localhost" || name.hasSuffix(".localhost") ? .loopback : .public
        isOddAddressForm = false
        isAddress = false
    }

    /// The class of `host` (a name, an IPv4 address in any form, or an IPv6 address with or without brackets); nil
    /// when it is none of those.
    public static func classify(host: String) -> DestinationClass? {
        let text = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return (try? URLDestination(parsing: "http://\(text)/"))?.destinationClass
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }
    /// Letters, digits, `-`, `_` and `.` (international names are refused before: see `init(parsing:)`); libcurl
    /// refuses `%` and punctuation.
    static func isHostByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ".")
    }
    static func isSchemeByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".")
    }
}

/// An IPv4 address as `inet_aton` reads it: one to four parts, each decimal, `0x` hex or `0` octal, the last filling
/// the remaining bytes.
struct IPv4Address: Hashable {
    var value: UInt32

    init(_ value: UInt32) { self.value = value }

    init?(inetAton text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard let number = Self.number(part) else { return nil }
            numbers.append(number)
        }
        var result: UInt64 = 0
        for number in numbers.dropLast() {
            guard number <= 255 else { return nil }
            result = result << 8 | number
        }
        let lastBits = UInt64(8 * (5 - parts.count))
        guard let last = numbers.last, last < (1 << lastBits) else { return nil }
        result = result << lastBits | last
        guard let value = UInt32(exactly: result) else { return nil }
        self.value = value
    }

    private static func number(_ part: Substring) -> UInt64? {
        var digits = Substring(part)
        var radix: UInt64 = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        } else if digits.count > 1, digits.hasPrefix("0") {
            radix = 8
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 16 else { return nil }
        var value: UInt64 = 0
        for character in digits {
            guard let digit = character.hexDigitValue.map(UInt64.init), digit < radix else { return nil }
            value = value * radix + digit
        }
        return value
    }

    /// Dotted decimal.
    var text: String { "\(value >> 24).\(value >> 16 & 255).\(value >> 8 & 255).\(value & 255)" }

    var destinationClass: DestinationClass {
        let a = value >> 24
        let b = value >> 16 & 255
        switch a {
        case 0: return .unspecified
        case 127: return .loopback
        case 10: return .private
        case 100 where (64...127).contains(b): return .private
        case 169 where b == 254: return .linkLocal
        case 172 where (16...31).contains(b): return .private
        case 192 where b == 168: return .private
        case 224...255: return .reserved
        default: return .public
        }
    }
}

/// An IPv6 address (RFC 4291 text, with `::` and a trailing dotted IPv4 part; no zone id).
struct IPv6Address: Hashable {
    var bytes: [UInt8]

    init?(_ text: ArraySlice<UInt8>) {
        let string = String(decoding: text, as: UTF8.self).lowercased()
        guard !string.isEmpty, string.count <= 45, !string.contains("%") else { return nil }
        let halves = string.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String, allowIPv4: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, allowIPv4, piece.contains(".") {
                    let parts = piece.split(separator: ".", omittingEmptySubsequences: false)
                    let plain = parts.allSatisfy { part in
                        !part.isEmpty && part.count <= 3 && part.utf8.allSatisfy(URLDestination.isDigit)
                    }
                    guard parts.count == 4, plain,
                        let v4 = IPv4Address(inetAton: String(piece)), v4.text == piece
                    else { return nil }
                    result.append(UInt16(v4.value >> 16))
                    result.append(UInt16(v4.value & 0xFFFF))
                    continue
                }
                guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        var words: [UInt16]
        if halves.count == 2 {
            guard let head = groups(halves[0], allowIPv4: false), let tail = groups(halves[1], allowIPv4: true),
                head.count + tail.count <= 7
            else { return nil }
            words = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let all = groups(string, allowIPv4: true), all.count == 8 else { return nil }
            words = all
        }
        bytes = words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// The IPv4 address of an IPv4-mapped (`::ffff:a.b.c.d`) or -compatible (`::a.b.c.d`) address.
    private var embeddedIPv4: IPv4Address? {
        guard bytes[0..<10].allSatisfy({ $0 == 0 }) else { return nil }
        let mapped = bytes[10] == 0xFF && bytes[11] == 0xFF
        let compatible = bytes[10] == 0 && bytes[11] == 0 && bytes[12..<16].contains { $0 != 0 } && !isLoopback
        guard mapped || compatible else { return nil }
        return IPv4Address(bytes[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// The IPv4 address a translation prefix carries: NAT64 (`64:ff9b::/96`, RFC 6052; `64:ff9b:1::/48`, RFC 8215:
    /// the last 32 bits) and 6to4 (`2002::/16`, RFC 3056: bits 16–47). A router delivers such an address to the IPv4
    /// it carries, so it is classed as that address (`64:ff9b::127.0.0.1` is loopback).
    private var translatedIPv4: IPv4Address? {
        func v4(_ range: Range<Int>) -> IPv4Address {
            IPv4Address(bytes[range].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        if bytes[0] == 0x00, bytes[1] == 0x64, bytes[2] == 0xFF, bytes[3] == 0x9B {
            if bytes[4..<12].allSatisfy({ $0 == 0 }) { return v4(12..<16) }
            if bytes[4] == 0, bytes[5] == 1 { return v4(12..<16) }
        }
        if bytes[0] == 0x20, bytes[1] == 0x02 { return v4(2..<6) }
        return nil
    }

    private var isLoopback: Bool { bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1 }

    var isOddForm: Bool { embeddedIPv4 != nil }

    var destinationClass: DestinationClass {
        if bytes.allSatisfy({ $0 == 0 }) { return .unspecified }
        if isLoopback { return .loopback }
        if let v4 = embeddedIPv4 ?? translatedIPv4 { return v4.destinationClass }
        switch bytes[0] {
        case 0xFF: return .reserved
        case 0xFC, 0xFD: return .private
        case 0xFE where bytes[1] & 0xC0 == 0x80: return .linkLocal
        case 0xFE where bytes[1] & 0xC0 == 0xC0: return .private
        default: return .public
        }
    }

    /// Lower-case hex groups, the longest run of two or more zero groups as `::` (RFC 5952).
    var text: String {
        let words = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            guard words[index] == 0 else {
                index += 1
                continue
            }
            var end = index
            while end < 8, words[end] == 0 { end += 1 }
            if end - index > best.length, end - index >= 2 { best = (index, end - index) }
            index = end
        }
        let hex = words.map { String($0, radix: 16) }
        guard best.start >= 0 else { return hex.joined(separator: ":") }
        let head = hex[..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }
}
