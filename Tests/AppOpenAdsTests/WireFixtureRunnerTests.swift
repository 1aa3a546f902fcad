import AdMediation
import AdapterKit
import AppOpenAds
import TestSupport
import Testing

/// The wire-fixture runner itself (TestSupport's `WireFixtures`): what it reports when an adapter and a fixture
/// disagree, so a fixture can fail.
@Suite("Wire fixture runner", .timeLimit(.minutes(2)))
struct WireFixtureRunnerTests {
    static func json(_ text: String) throws -> JSONValue {
        try #require(JSONValue.parse(Array(text.utf8)))
    }

    @Test("a body subset mismatch is reported with its path, the expected and the actual value")
    func subsetMismatchNamesItsPath() throws {
        let expected = try Self.json(#"{"privacy": {"gdpr": 1}, "size": {"width": 320}}"#)
        let actual = try Self.json(#"{"privacy": {"gdpr": 0, "coppa": 0}, "size": {"width": 320, "height": 50}}"#)
        let found = FixtureMatch.mismatches(expected: expected, actual: actual, path: "body")
        #expect(found == [WireFixtureMismatch(path: "body.privacy.gdpr", expected: "1", actual: "0")])
    }

    @Test("numbers are compared as numbers and extra keys of the actual value are allowed")
    func numbersCompareAsNumbers() throws {
        let expected = try Self.json(#"{"price": 2, "cur": ["USD"]}"#)
        let actual = try Self.json(#"{"price": 2.0, "cur": ["USD"], "id": "x"}"#)
        #expect(FixtureMatch.mismatches(expected: expected, actual: actual, path: "body").isEmpty)
    }

    @Test("the absent, present and pattern markers hold and fail where they should")
    func markers() throws {
        let expected = try Self.json(
            #"{"gdpr": {"$absent": true}, "id": {"$present": true}, "sig": {"$pattern": "^[0-9a-f]{4}$"}}"#)
        let good = try Self.json(#"{"id": "r1", "sig": "00ff"}"#)
        let bad = try Self.json(#"{"gdpr": 1, "sig": "00FFz"}"#)
        #expect(FixtureMatch.mismatches(expected: expected, actual: good, path: "q").isEmpty)
        let paths = FixtureMatch.mismatches(expected: expected, actual: bad, path: "q").map(\.path)
        #expect(paths == ["q.gdpr", "q.id", "q.sig"])
    }

    @Test("a replay reports a wrong request field and a wrong outcome, each with its fixture path")
    func replayReportsMismatches() async throws {
        let text = """
            {"description": "deliberately wrong",
             "request": {"placement": "unit-1", "format": "app_open"},
             "http_calls": [{"expected_request": {"method": "GET", "query": {"ad_unit_id": "unit-2"}},
                             "mock_response": {"status": 204}}],
             "expected": {"error": {"code": "server(503)"}}}
            """
        let fixture = try WireFixture(json: Array(text.utf8), name: "wrong.json")
        let replay = try await WireFixtures.replay(fixture) { context in
            WireFixtureNetwork(
                AppOpenNetwork(configuration: .init(baseURL: context.baseURL), http: context.http, clock: context.clock)
            )
        }
        #expect(
            replay.mismatches.map(\.path) == ["http_calls[0].expected_request.query.ad_unit_id", "expected.error"])
        #expect(replay.mismatches.first?.expected == #""unit-2""#)
        #expect(replay.mismatches.first?.actual == #""unit-1""#)
    }

    @Test("a request the fixture does not list is reported")
    func extraRequestIsReported() async throws {
        let text = """
            {"description": "no call listed", "request": {"placement": "unit-1", "format": "app_open"},
             "http_calls": [], "expected": {"no_fill": {}}}
            """
        let fixture = try WireFixture(json: Array(text.utf8), name: "none.json")
        let replay = try await WireFixtures.replay(fixture) { context in
            WireFixtureNetwork(
                AppOpenNetwork(configuration: .init(baseURL: context.baseURL), http: context.http, clock: context.clock)
            )
        }
        #expect(replay.mismatches.first?.path == "http_calls[0]")
        #expect(replay.mismatches.first?.actual.hasPrefix("GET /appopen/v1/ad?") == true)
    }

    @Test("a fixture with an unknown key is refused with the key's path")
    func unknownKeyIsRefused() throws {
        let text = """
            {"description": "typo", "request": {"placement": "u", "format": "app_open", "flor": 1},
             "http_calls": [], "expected": {"no_fill": {}}}
            """
        #expect {
            try WireFixture(json: Array(text.utf8), name: "typo.json")
        } throws: { error in
            (error as? WireFixtureError)?.message.contains(#"request has an unknown key "flor""#) == true
        }
    }
}
