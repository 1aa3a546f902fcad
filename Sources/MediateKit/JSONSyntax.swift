/// Where a text stops being JSON (RFC 8259), for a configuration file's error message: a truncated or mistyped file
/// is named with the line and column of its first error (issue 47 item 5), which the decoder's own error does not
/// give. A recursive-descent scan that only validates; its nesting is bounded (`maxDepth`).
package struct JSONSyntaxError: Error, Equatable, Sendable {
    /// The 1-based line of the first error.
    package var line: Int
    /// The 1-based column (in characters) of the first error on its line.
    package var column: Int
    /// What was found there and what was expected (`unexpected end of file, expected "}" or ","`).
    package var message: String

    /// `line 3, column 14: unexpected end of file, expected "}" or ","`.
    package var description: String { "line \(line), column \(column): \(message)" }
}

/// The scan behind ``JSONSyntaxError``: where a configuration file stops being JSON.
package enum JSONSyntax {
    /// The first syntax error of `bytes`, nil when they are one JSON value (with white space around it).
    package static func firstError(in bytes: [UInt8], maxDepth: Int = 64) -> JSONSyntaxError? {
        var scanner = Scanner(bytes: bytes, maxDepth: maxDepth)
        do throws(JSONSyntaxError) {
            scanner.skipSpace()
            try scanner.value(depth: 0)
            scanner.skipSpace()
            if scanner.index < bytes.count { throw scanner.failure("expected the end of the file") }
            return nil
        } catch {
            return error
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        let maxDepth: Int
        var index = 0

        init(bytes: [UInt8], maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        /// The error at the current position: line and column counted over the bytes before it (a UTF-8
        /// continuation byte is not a column).
        func failure(_ expected: String) -> JSONSyntaxError {
            var line = 1
            var column = 1
            for byte in bytes[..<min(index, bytes.count)] {
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            let found: String
            if let byte = current, (0x21...0x7E).contains(byte) {
                found = "unexpected \"\(Character(Unicode.Scalar(byte)))\""
            } else {
                found = current == nil ? "unexpected end of file" : "unexpected byte"
            }
            return JSONSyntaxError(line: line, column: column, message: "\(found), \(expected)")
        }

        mutating func skipSpace() {
            while let byte = current, [0x20, 0x0A, 0x0D, 0x09].contains(byte) { index += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
            guard current == byte else { throw failure("expected \(what)") }
            index += 1
        }

        mutating func value(depth: Int) throws(JSONSyntaxError) {
            guard depth < maxDepth else { throw failure("nesting deeper than \(maxDepth) levels") }
            guard let byte = current else { throw failure("expected a value") }
            switch byte {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), 0x30...0x39: try number()
            default: throw failure("expected a value")
            }
        }

        mutating func object(depth: Int) throws(JSONSyntaxError) {
            index += 1
            skipSpace()
            if current == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                guard current == UInt8(ascii: "\"") else { throw failure("expected a key in double quotes") }
                try string()
                skipSpace()
                try expect(UInt8(ascii: ":"), "\":\" after the key")
                skipSpace()
                try value(depth: depth + 1)
                skipSpace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    skipSpace()
                    continue
                }
                try expect(UInt8(ascii: "}"), "\"}\" or \",\"")
                return
            }
        }

        mutating func array(depth: Int) throws(JSONSyntaxError) {
            index += 1
            skipSpace()
            if current == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                try value(depth: depth + 1)
                skipSpace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    skipSpace()
                    continue
                }
                try expect(UInt8(ascii: "]"), "\"]\" or \",\"")
                return
            }
        }

        mutating func string() throws(JSONSyntaxError) {
            index += 1
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current, Array("\"\\/bfnrtu".utf8).contains(escaped) else {
                        throw failure("expected an escape (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t, \\u)")
                    }
                    index += 1
                    if escaped == UInt8(ascii: "u") {
                        for _ in 0..<4 {
                            guard let hex = current, hex.isHexDigit else { throw failure("expected 4 hex digits") }
                            index += 1
                        }
                    }
                case 0..<0x20:
                    throw failure("expected a closing \" (control characters must be escaped)")
                default:
                    index += 1
                }
            }
            throw failure("expected a closing \"")
        }

        mutating func literal(_ word: String) throws(JSONSyntaxError) {
            for byte in word.utf8 { try expect(byte, word) }
        }

        mutating func number() throws(JSONSyntaxError) {
            if current == UInt8(ascii: "-") { index += 1 }
            try digits()
            if current == UInt8(ascii: ".") {
                index += 1
                try digits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                try digits()
            }
        }

        mutating func digits() throws(JSONSyntaxError) {
            guard let first = current, (0x30...0x39).contains(first) else { throw failure("expected a digit") }
            while let byte = current, (0x30...0x39).contains(byte) { index += 1 }
        }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
