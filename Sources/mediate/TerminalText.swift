/// Text from outside (ad ids, server messages, names from a configuration) made safe for a terminal.
enum TerminalText {
    /// `text` with every control character escaped as `\u{XX}`: C0 (U+0000–U+001F, newline and tab included), DEL
    /// (U+007F), C1 (U+0080–U+009F, which some terminals read like ESC sequences) and the bidirectional controls
    /// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). Such text can then neither retitle nor clear the
    /// terminal (ESC/OSC/CSI sequences), nor start a line of its own that passes for the tool's, nor display
    /// reversed. Everything else is kept; text without a control character is returned as it is.
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
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || isBidiControl(scalar.value)
    }

    /// The bidirectional controls (Unicode TR #9: ALM, LRM, RLM, the embeddings and overrides, the isolates), which
    /// make text display in another order than it is ("Trojan Source", CVE-2021-42574).
    private static func isBidiControl(_ value: UInt32) -> Bool {
        value == 0x061C || value == 0x200E || value == 0x200F || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
