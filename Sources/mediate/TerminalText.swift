/// Text from outside (ad ids, server messages, names from a configuration) made safe for a terminal.
enum TerminalText {
    /// `text` with every control character escaped as `\u{XX}`: C0 (U+0000–U+001F, newline and tab included), DEL
    /// (U+007F) and C1 (U+0080–U+009F, which some terminals read like ESC sequences). Such text can then neither
    /// retitle nor clear the terminal (ESC/OSC/CSI sequences), nor start a line of its own that passes for the
    /// tool's. Everything else is kept; text without a control character is returned as it is.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 2) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
