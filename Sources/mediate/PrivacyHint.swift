import Foundation

/// Why a source's requests were not sent (issue 47 item 1): each `privacy_blocked` reason of a tally named with the
/// privacy rules' row that blocked it and the signal that row reads, so a 0 % fill is explained where the figures
/// are (the table, the JSON, the HTML), not only on stderr.
struct PrivacyHint: Encodable, Sendable {
    /// The rules' reason (`gdpr applies without a tcf string`).
    var reason: String
    /// How many requests it blocked.
    var requests: Int

    /// The row of the privacy rules' table (`PrivacyRules`) that blocks with this reason.
    var rule: String {
        if reason.hasPrefix("gdpr applies") { return "gdpr, no string" }
        if reason.contains("not disclosed") { return "tcf undisclosed" }
        if reason.contains("restriction") { return "tcf restriction" }
        if reason.hasPrefix("tcf purpose 1") { return "tcf purpose 1" }
        if reason.hasPrefix("tcf purpose 2") { return "tcf purpose 2" }
        return "privacy rules"
    }

    /// The signal the rule reads, with the option that sets it.
    var signal: String {
        switch rule {
        case "gdpr, no string":
            "GDPR applies (--gdpr 1 or --gpp-sid 2) and no TC string decodes (--tcf)"
        case "tcf undisclosed": "the TC string's disclosed vendors (--tcf)"
        case "tcf restriction": "the TC string's publisher restrictions (--tcf)"
        case "tcf purpose 1": "the TC string's consent to purpose 1, device access (--tcf)"
        case "tcf purpose 2": "the TC string's consent or legitimate interest for purpose 2, basic ads (--tcf)"
        default: "the privacy signals"
        }
    }

    /// `20 of 20 requests not sent (privacy_blocked): gdpr applies without a tcf string; rule "gdpr, no string";
    /// signal: …; given: --gdpr 1`.
    func text(of total: Int, given: [String]) -> String {
        "\(requests) of \(total) requests not sent (privacy_blocked): \(reason); rule \"\(rule)\"; signal: \(signal)"
            + "; given: \(given.isEmpty ? "no privacy option" : given.joined(separator: " "))"
    }

    /// The JSON form: `{"reason", "rule", "signal", "requests"}`.
    enum CodingKeys: String, CodingKey {
        case reason, rule, signal, requests
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reason, forKey: .reason)
        try container.encode(rule, forKey: .rule)
        try container.encode(signal, forKey: .signal)
        try container.encode(requests, forKey: .requests)
    }

    /// A tally's hints, most requests first.
    static func of(_ tally: Tally) -> [PrivacyHint] {
        tally.blockReasons.map { PrivacyHint(reason: $0.key, requests: $0.value) }
            .sorted { ($0.requests, $1.reason) > ($1.requests, $0.reason) }
    }
}

/// A source's `"privacy_blocked": {"requests", "given", "reasons": […]}`: the requests the privacy rules blocked, the
/// privacy options given, and each reason (``PrivacyHint``).
struct PrivacyBlocked: Encodable, Sendable {
    var requests: Int
    var given: [String]
    var reasons: [PrivacyHint]

    /// The blocked requests of `tally`; nil when it has none.
    init?(_ tally: Tally, given: [String]) {
        let hints = PrivacyHint.of(tally)
        guard !hints.isEmpty else { return nil }
        requests = hints.reduce(0) { $0 + $1.requests }
        self.given = given
        reasons = hints
    }

    enum CodingKeys: String, CodingKey {
        case requests, given, reasons
    }
}

/// `text` in lines of at most `width` characters, broken at spaces; lines after the first start with `indent`.
func wrapped(_ text: String, width: Int, indent: String) -> [String] {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ", omittingEmptySubsequences: false) {
        let prefix = lines.isEmpty ? "" : indent
        if !line.isEmpty, prefix.count + line.count + 1 + word.count > width {
            lines.append(prefix + line)
            line = String(word)
        } else {
            line += (line.isEmpty ? "" : " ") + word
        }
    }
    lines.append((lines.isEmpty ? "" : indent) + line)
    return lines
}
