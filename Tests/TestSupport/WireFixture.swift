import AdMediation
import AdPrivacy
import AdapterKit
import Foundation

// One wire fixture file, parsed field by field (see WireFixtures.swift and docs/RELIABILITY.md).

/// A fixture file that cannot be read or does not follow the format.
public struct WireFixtureError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem.
    public enum Code: String, Sendable {
        /// The file could not be read.
        case unreadable
        /// The file is not JSON, or a field is missing, unknown or of the wrong type.
        case invalid
    }

    /// What kind of problem.
    public var code: Code
    /// Which file and field, and why.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `invalid: …`.
    public var description: String { "\(code.rawValue): \(message)" }
}

/// One wire fixture: an ad request, the HTTP exchanges it must cause, and the outcome.
public struct WireFixture: Sendable {
    /// What the case shows.
    public var summary: String
    /// Set when the adapter is known to disagree with the spec here: the test records the mismatch as a known issue.
    public var knownIssue: String?
    /// Adapter settings the test's factory reads (e.g. `app_id`, `destinations`).
    public var settings: [String: JSONValue]
    /// The ad request.
    public var request: AdRequest
    /// The exchanges, in order: the n-th request the adapter sends is checked against, and answered by, the n-th.
    public var calls: [Call]
    /// What `load` must return or throw.
    public var expected: Outcome

    /// One HTTP exchange.
    public struct Call: Sendable {
        /// What the adapter must send (nil: anything).
        public var request: ExpectedRequest?
        /// What the mock server answers.
        public var response: MockResponse
    }

    /// What the adapter must send. Query and header values are strings or markers; names of headers are compared
    /// case-insensitively, query values after percent-decoding.
    public struct ExpectedRequest: Sendable {
        /// `GET`, `POST`, … (nil: any).
        public var method: String?
        /// The path without the query: a string, or a marker such as `{"$pattern": …}` (nil: any).
        public var path: JSONValue?
        /// A subset of the query items.
        public var query: [String: JSONValue]
        /// A subset of the header fields.
        public var headers: [String: JSONValue]
        /// A subset of the JSON body (nil: not checked).
        public var body: JSONValue?
    }

    /// What the mock server answers. In the body, `{{base_url}}` becomes the server's base URL and
    /// `{{request.body.PATH}}` the value at PATH of the request's JSON body (a string's characters, JSON-escaped).
    public struct MockResponse: Sendable {
        /// The status code.
        public var status: Int
        /// Header fields.
        public var headers: [(String, String)]
        /// The body as text, before substitution.
        public var body: String
    }

    /// The outcome `load` must reach.
    public enum Outcome: Sendable {
        /// A fill: its fields (`ecpm`, `creative_id`, `format`, `placement`, `network_id`, `kind`, `asset_url`,
        /// `click_url`, `markup`, `width`, `height`, `expires_in_seconds`, `fields`) as a subset.
        case filled(JSONValue)
        /// No fill, optionally with a reason containing the text.
        case noFill(reasonContains: String?)
        /// An `AdError` whose code name is `code` (`invalid_response`, `server_503` or `server(503)`).
        case error(code: String, messageContains: String?)
    }

    /// Parses a fixture; `name` only names the file in errors.
    public init(json bytes: [UInt8], name: String) throws(WireFixtureError) {
        guard let root = JSONValue.parse(bytes) else { throw WireFixtureError(.invalid, "\(name): not JSON") }
        let reader = FixtureReader(name: name)
        let top = try reader.object(
            root, "",
            keys: ["description", "known_issue", "settings", "request", "http_calls", "expected"])
        summary = try reader.string(top["description"], "description")
        knownIssue = try top["known_issue"].map { value throws(WireFixtureError) in
            try reader.string(value, "known_issue")
        }
        settings =
            try top["settings"].map { value throws(WireFixtureError) in
                try reader.object(value, "settings", keys: nil)
            } ?? [:]
        request = try reader.adRequest(top["request"])
        guard case .array(let calls)? = top["http_calls"] else {
            throw WireFixtureError(.invalid, "\(name): http_calls must be an array")
        }
        self.calls = try calls.enumerated().map { index, call throws(WireFixtureError) in
            try reader.call(call, "http_calls[\(index)]")
        }
        expected = try reader.outcome(top["expected"])
    }

    /// Reads and parses the fixture at `path`.
    public init(contentsOf path: String) throws(WireFixtureError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw WireFixtureError(.unreadable, "\(path) could not be read")
        }
        try self.init(json: Array(data), name: URL(fileURLWithPath: path).lastPathComponent)
    }
}

/// Field-by-field reading of a fixture, with the field path in every error and unknown keys refused.
private struct FixtureReader {
    let name: String

    func fail(_ path: String, _ why: String) -> WireFixtureError {
        WireFixtureError(.invalid, "\(name): \(path.isEmpty ? "the file" : path) \(why)")
    }

    func object(_ value: JSONValue?, _ path: String, keys: Set<String>?) throws(WireFixtureError)
        -> [String: JSONValue]
    {
        guard case .object(let members)? = value else { throw fail(path, "must be an object") }
        if let keys, let unknown = members.keys.sorted().first(where: { !keys.contains($0) }) {
            throw fail(path, "has an unknown key \"\(unknown)\" (known: \(keys.sorted().joined(separator: ", ")))")
        }
        return members
    }

    func string(_ value: JSONValue?, _ path: String) throws(WireFixtureError) -> String {
        guard case .string(let text)? = value else { throw fail(path, "must be a string") }
        return text
    }

    func optionalString(_ value: JSONValue?, _ path: String) throws(WireFixtureError) -> String? {
        guard let value else { return nil }
        return try string(value, path)
    }

    func bool(_ value: JSONValue?, _ path: String) throws(WireFixtureError) -> Bool? {
        guard let value else { return nil }
        guard case .bool(let flag) = value else { throw fail(path, "must be true or false") }
        return flag
    }

    func int(_ value: JSONValue?, _ path: String) throws(WireFixtureError) -> Int? {
        guard let value else { return nil }
        guard case .number(let number) = value, number.rounded() == number, abs(number) < 1e9 else {
            throw fail(path, "must be a whole number")
        }
        return Int(number)
    }

    func adRequest(_ value: JSONValue?) throws(WireFixtureError) -> AdRequest {
        let fields = try object(
            value, "request",
            keys: [
                "placement", "format", "size", "floor", "test_mode", "user_id", "session_id", "timeout_ms", "privacy",
            ])
        let formatName = try string(fields["format"], "request.format")
        let size = try optionalString(fields["size"], "request.size")
        let banner = try size.map { text throws(WireFixtureError) in
            guard let parsed = BannerSize(parsing: text) else { throw fail("request.size", "is not WxH") }
            return parsed
        }
        guard let format = AdFormat(name: formatName, size: banner) else {
            throw fail("request.format", "is not a format (banners need a size)")
        }
        var request = AdRequest(
            placement: try string(fields["placement"], "request.placement"), format: format,
            userID: try optionalString(fields["user_id"], "request.user_id"),
            sessionID: try optionalString(fields["session_id"], "request.session_id"),
            privacy: try privacy(fields["privacy"]),
            testMode: try bool(fields["test_mode"], "request.test_mode") ?? false,
            // A loopback replay: the default is a hang guard (a busy machine must not turn an answer into a timeout).
            timeout: try int(fields["timeout_ms"], "request.timeout_ms").map { .milliseconds($0) } ?? HangGuard.request)
        if let floor = fields["floor"] {
            guard case .number(let number) = floor else { throw fail("request.floor", "must be a number") }
            request.floorEcpm = number
        }
        return request
    }

    func privacy(_ value: JSONValue?) throws(WireFixtureError) -> PrivacySignals {
        guard let value else { return PrivacySignals() }
        let keys: Set<String> = [
            "gdpr", "tcf_consent", "us_privacy", "gpp", "gpp_sid", "coppa", "under_age", "lmt", "att",
        ]
        let fields = try object(value, "request.privacy", keys: keys)
        var sections: [Int] = []
        if let list = fields["gpp_sid"] {
            guard case .array(let items) = list else { throw fail("request.privacy.gpp_sid", "must be an array") }
            for (index, item) in items.enumerated() {
                sections.append(try int(item, "request.privacy.gpp_sid[\(index)]") ?? 0)
            }
        }
        var signals = PrivacySignals(
            gdprApplies: try bool(fields["gdpr"], "request.privacy.gdpr"),
            tcfConsent: try optionalString(fields["tcf_consent"], "request.privacy.tcf_consent"),
            usPrivacy: try optionalString(fields["us_privacy"], "request.privacy.us_privacy"),
            gpp: try optionalString(fields["gpp"], "request.privacy.gpp"), gppSectionIDs: sections,
            coppa: try bool(fields["coppa"], "request.privacy.coppa") ?? false,
            underAgeOfConsent: try bool(fields["under_age"], "request.privacy.under_age") ?? false)
        signals.limitAdTracking = try bool(fields["lmt"], "request.privacy.lmt") ?? false
        if let att = try int(fields["att"], "request.privacy.att") {
            guard let status = AppTrackingStatus(rawValue: att) else { throw fail("request.privacy.att", "is not 0-3") }
            signals.appTracking = status
        }
        return signals
    }

    func call(_ value: JSONValue, _ path: String) throws(WireFixtureError) -> WireFixture.Call {
        let fields = try object(value, path, keys: ["expected_request", "mock_response"])
        var expected: WireFixture.ExpectedRequest?
        if let request = fields["expected_request"] {
            let path = path + ".expected_request"
            let parts = try object(request, path, keys: ["method", "path", "query", "headers", "body"])
            expected = WireFixture.ExpectedRequest(
                method: try optionalString(parts["method"], path + ".method"),
                path: parts["path"],
                query: try parts["query"].map { value throws(WireFixtureError) in
                    try object(value, path + ".query", keys: nil)
                } ?? [:],
                headers: try parts["headers"].map { value throws(WireFixtureError) in
                    try object(value, path + ".headers", keys: nil)
                } ?? [:],
                body: parts["body"])
        }
        let responsePath = path + ".mock_response"
        let response = try object(
            fields["mock_response"], responsePath, keys: ["status", "headers", "body", "body_text"])
        let headerFields =
            try response["headers"].map { value throws(WireFixtureError) in
                try object(value, responsePath + ".headers", keys: nil)
            } ?? [:]
        var headers: [(String, String)] = []
        for name in headerFields.keys.sorted() {
            headers.append((name, try string(headerFields[name], responsePath + ".headers." + name)))
        }
        var body = try optionalString(response["body_text"], responsePath + ".body_text") ?? ""
        if let json = response["body"] {
            body = json.description
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                headers.append(("Content-Type", "application/json"))
            }
        }
        return WireFixture.Call(
            request: expected,
            response: WireFixture.MockResponse(
                status: try int(response["status"], responsePath + ".status") ?? 200, headers: headers, body: body))
    }

    func outcome(_ value: JSONValue?) throws(WireFixtureError) -> WireFixture.Outcome {
        let fields = try object(value, "expected", keys: ["filled", "no_fill", "error"])
        guard fields.count == 1, let only = fields.first else {
            throw fail("expected", "must hold exactly one of filled, no_fill, error")
        }
        let detail = only.value
        switch only.key {
        case "filled":
            let keys: Set<String> = [
                "ecpm", "creative_id", "format", "placement", "network_id", "kind", "asset_url", "click_url", "markup",
                "width", "height", "expires_in_seconds", "fields",
            ]
            _ = try object(detail, "expected.filled", keys: keys)
            return .filled(detail)
        case "no_fill":
            let parts = try object(detail, "expected.no_fill", keys: ["reason_contains"])
            return .noFill(
                reasonContains: try optionalString(parts["reason_contains"], "expected.no_fill.reason_contains"))
        default:
            let parts = try object(detail, "expected.error", keys: ["code", "message_contains"])
            return .error(
                code: try string(parts["code"], "expected.error.code"),
                messageContains: try optionalString(parts["message_contains"], "expected.error.message_contains"))
        }
    }
}
