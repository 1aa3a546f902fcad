import AdMediation
import AdTransport
import Foundation

/// `load --bodies` (issue 47 item 4): the HTTP client the networks of one `load` send through, recording each
/// exchange — method, URL, status or transport error, request and response bodies, each cut at ``maxBodyBytes`` —
/// for the debugger's output, as AdMob's Ad Inspector shares them. What it shows is redacted by one rule
/// (``Redaction``): the configured secrets and the user's ids never appear, in URLs or bodies.
final class BodyRecorder: HTTPClient {
    /// One HTTP exchange as sent and answered.
    struct Exchange: Sendable {
        var method: String
        var url: String
        var requestBody: Data
        var status: Int?
        var responseBody: Data
        var error: String?
    }

    /// The most bytes of a body shown (the rest is counted, not shown).
    static let maxBodyBytes = 4096
    /// The most exchanges kept (a request sends a handful; more are counted).
    static let maxExchanges = 64

    private let inner: any HTTPClient
    private let exchanges = LockedValue<(kept: [Exchange], dropped: Int)>(([], 0))

    /// Records what goes through `inner`.
    init(_ inner: any HTTPClient) { self.inner = inner }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var exchange = Exchange(
            method: request.method.rawValue, url: request.url, requestBody: request.body ?? Data(), status: nil,
            responseBody: Data(), error: nil)
        do {
            let response = try await inner.send(request)
            exchange.status = response.status
            exchange.responseBody = response.body
            keep(exchange)
            return response
        } catch {
            exchange.error = "\(error)"
            keep(exchange)
            throw error
        }
    }

    private func keep(_ exchange: Exchange) {
        exchanges.withLock { state in
            if state.kept.count < Self.maxExchanges { state.kept.append(exchange) } else { state.dropped += 1 }
        }
    }

    /// The exchanges so far, and how many were not kept.
    var recorded: (exchanges: [Exchange], dropped: Int) { exchanges.withLock { ($0.kept, $0.dropped) } }

    /// `body` as text for the output: UTF-8 (else its size only), cut at ``maxBodyBytes``, redacted.
    static func shown(_ body: Data, _ redaction: Redaction) -> String {
        guard !body.isEmpty else { return "" }
        let cut = body.prefix(maxBodyBytes)
        guard let text = String(data: cut, encoding: .utf8) else { return "<\(body.count) bytes, not UTF-8>" }
        let more = body.count > maxBodyBytes ? "… (\(body.count - maxBodyBytes) more bytes)" : ""
        return redaction.apply(text) + more
    }

    /// The JSON form of the exchanges: `[{"method", "url", "status", "error", "request_body", "request_bytes",
    /// "response_body", "response_bytes"}]`.
    static func json(_ exchanges: [Exchange], _ redaction: Redaction) -> [[String: Any]] {
        exchanges.map { exchange in
            [
                "method": exchange.method, "url": redaction.apply(exchange.url),
                "status": exchange.status.map { $0 as Any } ?? NSNull(),
                "error": exchange.error.map { redaction.apply($0) as Any } ?? NSNull(),
                "request_body": shown(exchange.requestBody, redaction), "request_bytes": exchange.requestBody.count,
                "response_body": shown(exchange.responseBody, redaction),
                "response_bytes": exchange.responseBody.count,
            ]
        }
    }

    /// The text form: per exchange `POST URL → 200`, then its bodies indented.
    static func text(_ exchanges: [Exchange], dropped: Int, _ redaction: Redaction) -> [String] {
        var lines = ["HTTP exchanges (\(exchanges.count)):"]
        for exchange in exchanges {
            let answer = exchange.status.map(String.init) ?? exchange.error.map(redaction.apply) ?? "?"
            lines.append("  \(exchange.method) \(redaction.apply(exchange.url)) → \(answer)")
            let request = shown(exchange.requestBody, redaction)
            if !request.isEmpty { lines.append("    request (\(exchange.requestBody.count) B): \(request)") }
            let response = shown(exchange.responseBody, redaction)
            if !response.isEmpty { lines.append("    response (\(exchange.responseBody.count) B): \(response)") }
        }
        if dropped > 0 { lines.append("  … \(dropped) more exchanges not kept") }
        return lines
    }
}

/// What `load --bodies` never shows: the configured secrets (every string value of a network's settings: keys,
/// signatures, app ids) and the user's ids (`--app-user-id`, `--advertising-id`), wherever they occur — URL, query,
/// body — each replaced by `<redacted>`; the same values the CLI keeps out of its logs and `mediate list`.
struct Redaction: Sendable {
    /// The values replaced, longest first (so a value containing another is replaced whole).
    private(set) var values: [String]

    /// Redacts `values` (empty ones and those under 3 characters are ignored: they would match anywhere).
    init(_ values: [String]) {
        // Flags and numbers (`"catalog_cache": "false"`) are settings, not secrets: replacing them would garble JSON.
        let secret = values.filter { $0.count >= 3 && !["true", "false"].contains($0) && Double($0) == nil }
        self.values = Array(Set(secret)).sorted { $0.count > $1.count }
    }

    /// `text` with every value replaced, as typed and percent-encoded.
    func apply(_ text: String) -> String {
        var result = text
        for value in values {
            result = result.replacingOccurrences(of: value, with: "<redacted>")
            if let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != value {
                result = result.replacingOccurrences(of: encoded, with: "<redacted>")
            }
        }
        return result
    }

    /// The string values of every network's settings in a configuration file's JSON (all but `type` and
    /// `base_url`).
    static func settingValues(_ data: Data) -> [String] {
        let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        let networks = root?["networks"] as? [String: Any] ?? [:]
        return networks.values.flatMap { value -> [String] in
            guard let network = value as? [String: Any] else { return [] }
            return network.filter { !["type", "base_url"].contains($0.key) }.compactMap { $0.value as? String }
        }
    }
}
