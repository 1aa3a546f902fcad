import AdMediation
import AdMediationTesting
import AdTransport
import AdapterKit
import CurlTransport
import Foundation

// Wire fixtures in Prebid Server's exemplary/supplemental style: a JSON file per case holds the ad request, the HTTP
// exchange(s) the adapter must make (what it sends, what the mock server answers) and the outcome it must reach.
// One runner replays every file of every adapter over real loopback HTTP; docs/RELIABILITY.md describes the format.

/// What a test's factory gets to build its adapter against the mock server.
public struct WireFixtureContext: Sendable {
    /// `http://127.0.0.1:PORT` of the mock server.
    public var baseURL: String
    /// A real HTTP client (libcurl).
    public var http: any HTTPClient
    /// A manual clock the adapter should use (ages and expiries are then exact).
    public var clock: ManualAdClock
    /// The fixture's `settings`.
    public var settings: [String: JSONValue]

    /// The string setting `key`, or `fallback`.
    public func setting(_ key: String, or fallback: String) -> String {
        if case .string(let text)? = settings[key] { return text }
        return fallback
    }
}

/// An adapter built for one replay, with what to do after it.
public struct WireFixtureNetwork: Sendable {
    /// The adapter.
    public var network: any AdNetwork
    /// Run after the load (stop background work).
    public var shutdown: @Sendable () async -> Void

    /// Wraps an adapter.
    public init(_ network: any AdNetwork, shutdown: @escaping @Sendable () async -> Void = {}) {
        self.network = network
        self.shutdown = shutdown
    }
}

/// The result of replaying one fixture.
public struct WireFixtureReplay: Sendable {
    /// The fixture's `known_issue`, if any.
    public var knownIssue: String?
    /// Every difference found; empty when the adapter did what the fixture says.
    public var mismatches: [WireFixtureMismatch]

    /// One line per mismatch.
    public var report: String { mismatches.map(\.description).joined(separator: "\n") }
}

/// The fixture files of one adapter's test target and their replay.
public struct WireFixtures: Sendable {
    /// The fixtures folder (`Fixtures` beside the test file that named it).
    public let directory: String
    /// Relative file names (`exemplary/fill.json`), sorted: the test's arguments.
    public let names: [String]

    /// The fixtures in the `Fixtures` folder beside `filePath` (pass `#filePath`): `exemplary/*.json` and
    /// `supplemental/*.json`.
    public init(near filePath: String) {
        let folder = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        directory = folder.path
        names = ["exemplary", "supplemental"].flatMap { kind in
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(kind).path))
            return (files ?? []).filter { $0.hasSuffix(".json") }.sorted().map { "\(kind)/\($0)" }
        }
    }

    /// Reads fixture `name` (on a thread of its own, off the cooperative pool) and replays it. `settings` lists the
    /// keys of the fixture's `settings` the factory reads: any other key is reported as a mismatch (a typo).
    public func replay(
        _ name: String, settings: Set<String> = [],
        makeNetwork: @Sendable (WireFixtureContext) async throws -> WireFixtureNetwork
    ) async throws -> WireFixtureReplay {
        let path = directory + "/" + name
        let read: Result<WireFixture, WireFixtureError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                do throws(WireFixtureError) {
                    continuation.resume(returning: .success(try WireFixture(contentsOf: path)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.start()
        }
        let fixture = try read.get()
        var replay = try await Self.replay(fixture, makeNetwork: makeNetwork)
        let unknown = fixture.settings.keys.filter { !settings.contains($0) }.sorted()
        replay.mismatches += unknown.map { key in
            WireFixtureMismatch(
                path: "settings.\(key)", expected: "one of [\(settings.sorted().joined(separator: ", "))]",
                actual: "an unknown key")
        }
        return replay
    }

    /// Replays `fixture`: starts a loopback server that records each request and answers the matching mock
    /// response, builds the adapter against it, calls `load`, and returns every mismatch.
    public static func replay(
        _ fixture: WireFixture, makeNetwork: @Sendable (WireFixtureContext) async throws -> WireFixtureNetwork
    ) async throws -> WireFixtureReplay {
        let recorder = Recorder()
        let calls = fixture.calls
        let server = try LoopbackHTTPServer { request in
            let index = recorder.requests.withLock { list in
                list.append(request)
                return list.count - 1
            }
            guard index < calls.count else {
                return .respond(.text("no mock answer for request \(index)", status: 599))
            }
            let response = calls[index].response
            let body = substitute(response.body, base: recorder.base.withLock { $0 }, request: request)
            return .respond(.init(status: response.status, headers: response.headers, body: Array(body.utf8)))
        }
        recorder.base.withLock { $0 = server.baseURL }
        let curl = CurlHTTPClient()
        let context = WireFixtureContext(
            baseURL: server.baseURL, http: curl, clock: ManualAdClock(start: .zero + .seconds(1_000)),
            settings: fixture.settings)
        var mismatches: [WireFixtureMismatch] = []
        do {
            let built = try await makeNetwork(context)
            let outcome: Result<AdLoadResult, any Error>
            do {
                outcome = .success(try await built.network.load(fixture.request))
            } catch {
                outcome = .failure(error)
            }
            let requests = recorder.requests.withLock { $0 }
            await built.shutdown()
            mismatches += requestMismatches(fixture.calls, requests)
            mismatches += outcomeMismatches(fixture.expected, outcome, clock: context.clock)
        } catch {
            await curl.shutdown()
            server.stop()
            throw error
        }
        await curl.shutdown()
        server.stop()
        return WireFixtureReplay(knownIssue: fixture.knownIssue, mismatches: mismatches)
    }

    /// What the mock server saw, shared with its handler.
    private final class Recorder: Sendable {
        let requests = LockedValue<[LoopbackHTTPServer.Request]>([])
        let base = LockedValue("")
    }

    static func substitute(_ text: String, base: String, request: LoopbackHTTPServer.Request) -> String {
        var out = text.replacingOccurrences(of: "{{base_url}}", with: base)
        guard out.contains("{{request.body.") else { return out }
        let body = JSONValue.parse(request.body)
        while let start = out.range(of: "{{request.body."),
            let end = out.range(of: "}}", range: start.upperBound..<out.endIndex)
        {
            let path = String(out[start.upperBound..<end.lowerBound])
            let value: String
            switch body?.value(at: path) {
            case .string(let text)?: value = String(JSONValue.string(text).description.dropFirst().dropLast())
            case let other?: value = other.description
            case nil: value = ""
            }
            out.replaceSubrange(start.lowerBound..<end.upperBound, with: value)
        }
        return out
    }

    static func requestMismatches(
        _ calls: [WireFixture.Call], _ requests: [LoopbackHTTPServer.Request]
    ) -> [WireFixtureMismatch] {
        var mismatches: [WireFixtureMismatch] = []
        for index in 0..<max(calls.count, requests.count) {
            let path = "http_calls[\(index)]"
            guard index < requests.count else {
                mismatches.append(WireFixtureMismatch(path: path, expected: "a request", actual: "none was sent"))
                continue
            }
            let request = requests[index]
            guard index < calls.count else {
                mismatches.append(
                    WireFixtureMismatch(
                        path: path, expected: "no further request", actual: "\(request.method) \(request.target)"))
                continue
            }
            guard let expected = calls[index].request else { continue }
            mismatches += requestMismatches(expected, request, path: path + ".expected_request")
        }
        return mismatches
    }

    static func requestMismatches(
        _ expected: WireFixture.ExpectedRequest, _ request: LoopbackHTTPServer.Request, path: String
    ) -> [WireFixtureMismatch] {
        var mismatches: [WireFixtureMismatch] = []
        if let method = expected.method, method != request.method {
            mismatches.append(WireFixtureMismatch(path: path + ".method", expected: method, actual: request.method))
        }
        if let wanted = expected.path {
            mismatches += FixtureMatch.mismatches(expected: wanted, actual: .string(request.path), path: path + ".path")
        }
        if !expected.query.isEmpty {
            var items: [String: JSONValue] = [:]
            let query = request.target.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                let value = parts.count > 1 ? String(parts[1]) : ""
                if items[name] == nil { items[name] = .string(value.removingPercentEncoding ?? value) }
            }
            mismatches += FixtureMatch.mismatches(
                expected: .object(expected.query), actual: .object(items), path: path + ".query")
        }
        if !expected.headers.isEmpty {
            var fields: [String: JSONValue] = [:]
            for (name, value) in request.headers where fields[name.lowercased()] == nil {
                fields[name.lowercased()] = .string(value)
            }
            let wanted = Dictionary(expected.headers.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
            mismatches += FixtureMatch.mismatches(
                expected: .object(wanted), actual: .object(fields), path: path + ".headers")
        }
        if let body = expected.body {
            if let actual = JSONValue.parse(request.body) {
                mismatches += FixtureMatch.mismatches(expected: body, actual: actual, path: path + ".body")
            } else {
                let text = String(decoding: request.body.prefix(200), as: UTF8.self)
                mismatches.append(WireFixtureMismatch(path: path + ".body", expected: "a JSON body", actual: text))
            }
        }
        return mismatches
    }

    static func outcomeMismatches(
        _ expected: WireFixture.Outcome, _ outcome: Result<AdLoadResult, any Error>, clock: ManualAdClock
    ) -> [WireFixtureMismatch] {
        let actual: String
        switch outcome {
        case .success(.filled(let ad)): actual = "a fill \(ad)"
        case .success(.noFill(let noFill)): actual = "no fill (\(noFill.reason))"
        case .failure(let error): actual = "error \(error)"
        }
        switch (expected, outcome) {
        case (.filled(let wanted), .success(.filled(let ad))):
            return FixtureMatch.mismatches(expected: wanted, actual: fields(of: ad), path: "expected.filled")
        case (.noFill(let reason), .success(.noFill(let noFill))):
            guard let reason, !noFill.reason.contains(reason) else { return [] }
            return [
                WireFixtureMismatch(
                    path: "expected.no_fill.reason_contains", expected: reason, actual: noFill.reason)
            ]
        case (.error(let code, let message), .failure(let error)):
            guard let error = error as? AdError else {
                return [WireFixtureMismatch(path: "expected.error", expected: "an AdError", actual: "\(error)")]
            }
            var found: [WireFixtureMismatch] = []
            let wantedCode = code.replacingOccurrences(of: "(", with: "_").replacingOccurrences(of: ")", with: "")
            if wantedCode != error.code.name {
                found.append(WireFixtureMismatch(path: "expected.error.code", expected: code, actual: "\(error)"))
            }
            if let message, !error.message.contains(message) {
                found.append(
                    WireFixtureMismatch(
                        path: "expected.error.message_contains", expected: message, actual: error.message))
            }
            return found
        case (.filled, _): return [WireFixtureMismatch(path: "expected.filled", expected: "a fill", actual: actual)]
        case (.noFill, _): return [WireFixtureMismatch(path: "expected.no_fill", expected: "no fill", actual: actual)]
        case (.error(let code, _), _):
            return [WireFixtureMismatch(path: "expected.error", expected: "error \(code)", actual: actual)]
        }
    }

    /// The fields of a fill that `expected.filled` can name.
    static func fields(of ad: LoadedAd) -> JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        func optional(_ number: Int?) -> JSONValue { number.map { .number(Double($0)) } ?? .null }
        var members: [String: JSONValue] = [
            "ecpm": ad.ecpm.map(JSONValue.number) ?? .null,
            "creative_id": .string(ad.creative.id),
            "format": .string(ad.format.description),
            "placement": .string(ad.placement),
            "network_id": .string(ad.networkID),
            "kind": .string(ad.creative.kind),
            "asset_url": optional(ad.creative.assetURL),
            "click_url": optional(ad.creative.clickURL),
            "markup": optional(ad.creative.markup),
            "width": optional(ad.creative.width),
            "height": optional(ad.creative.height),
            "fields": .object(ad.creative.fields.mapValues(JSONValue.string)),
        ]
        if let expiry = ad.expiresAt {
            let lifetime = expiry - ad.loadedAt
            members["expires_in_seconds"] = .number(
                Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18)
        } else {
            members["expires_in_seconds"] = .null
        }
        return .object(members)
    }
}
