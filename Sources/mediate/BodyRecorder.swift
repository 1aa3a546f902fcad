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

    /// One exchange as the outputs show it: URL, error and bodies redacted, bodies cut (``shown(_:_:)``), with their
    /// sizes. JSON: `{"method", "url", "status", "error", "request_body", "request_bytes", "response_body",
    /// "response_bytes"}` (`status` and `error` null when absent).
    struct Shown: Encodable, Sendable {
        var method: String
        var url: String
        var status: Int?
        var error: String?
        var requestBody: String
        var requestBytes: Int
        var responseBody: String
        var responseBytes: Int

        init(_ exchange: Exchange, _ redaction: Redaction) {
            method = exchange.method
            url = redaction.apply(exchange.url)
            status = exchange.status
            error = exchange.error.map(redaction.apply)
            requestBody = BodyRecorder.shown(exchange.requestBody, redaction)
            requestBytes = exchange.requestBody.count
            responseBody = BodyRecorder.shown(exchange.responseBody, redaction)
            responseBytes = exchange.responseBody.count
        }

        enum CodingKeys: String, CodingKey {
            case method, url, status, error
            case requestBody = "request_body"
            case requestBytes = "request_bytes"
            case responseBody = "response_body"
            case responseBytes = "response_bytes"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(method, forKey: .method)
            try container.encode(url, forKey: .url)
            try container.encode(status, forKey: .status)
            try container.encode(error, forKey: .error)
            try container.encode(requestBody, forKey: .requestBody)
            try container.encode(requestBytes, forKey: .requestBytes)
            try container.encode(responseBody, forKey: .responseBody)
            try container.encode(responseBytes, forKey: .responseBytes)
        }
    }

    /// The text form: per exchange `POST URL → 200`, then its bodies indented.
    static func text(_ exchanges: [Shown], dropped: Int) -> [String] {
        var lines = ["HTTP exchanges (\(exchanges.count)):"]
        for exchange in exchanges {
            let answer = exchange.status.map(String.init) ?? exchange.error ?? "?"
            lines.append("  \(exchange.method) \(exchange.url) → \(answer)")
            if !exchange.requestBody.isEmpty {
                lines.append("    request (\(exchange.requestBytes) B): \(exchange.requestBody)")
            }
            if !exchange.responseBody.isEmpty {
                lines.append("    response (\(exchange.responseBytes) B): \(exchange.responseBody)")
            }
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
        NetworkSettings.read(data).values.flatMap { settings in
            settings.strings.filter { !["type", "base_url"].contains($0.key) }.map(\.value)
        }
    }
}
