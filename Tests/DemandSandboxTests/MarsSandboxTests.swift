import AdMediation
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import Testing

@Suite("Sandbox: MARS", .timeLimit(.minutes(2)))
struct MarsSandboxTests {
    func ads(_ sandbox: RunningSandbox, _ body: String, _ client: CurlHTTPClient) async throws -> HTTPResponse {
        try await client.send(post(sandbox.marsBaseURL + "ads", body))
    }

    @Test func tilesSpocsAndImagesFillWithCallbacksPointingBack() async throws {
        try await withSandbox { sandbox, client in
            let response = try await ads(
                sandbox,
                (#"{"context_id":"c1","placements":[{"placement":"mock_tile_1","count":1,"content":null},"#
                    + (#"{"placement":"mock_spoc_1","count":3,"content":{"taxonomy":"IAB-3.0","#
                        + #""categories":["338"]}},{"placement":"mock_billboard_1","count":1,"content":null}]}"#)),
                client)
            #expect(response.status == 200)
            #expect(response.headers["Cache-Control"] == "max-age=300")
            let body = try json(response)
            let spocs = try #require(body["mock_spoc_1"] as? [[String: Any]])
            #expect(spocs.count == 3)
            #expect((spocs[0]["caps"] as? [String: Any])?["cap_key"] is String)
            #expect((spocs[0]["ranking"] as? [String: Any])?["priority"] as? Int == 1)
            let tile = try #require((body["mock_tile_1"] as? [[String: Any]])?.first)
            #expect(tile["name"] is String)
            let callbacks = try #require(tile["callbacks"] as? [String: String])
            #expect(callbacks["impression"]?.hasPrefix(sandbox.marsBaseURL + "t?") == true)
            #expect(((body["mock_billboard_1"] as? [[String: Any]])?.first)?["format"] as? String == "billboard")
        }
    }

    @Test func callbacksAreRecordedWithTheirQuery() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                HTTPRequest(url: sandbox.marsBaseURL + "t?data=impression-x&request_hash=abc"))
            #expect(response.status == 200)
            #expect(sandbox.marsRecords.callbacks.first?.query == ["data": "impression-x", "request_hash": "abc"])
        }
    }

    @Test func deleteUserWithDoubleSlashRecordsTheContextID() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                HTTPRequest(
                    method: .delete, url: sandbox.marsBaseURL + "/delete_user",
                    body: Data(#"{"context_id":"old-id"}"#.utf8)))
            #expect(response.status == 200)
            #expect(sandbox.marsRecords.deletedContextIDs == ["old-id"])
        }
    }

    @Test func noFillLeavesAnEmptyListForThePlacement() async throws {
        try await withSandbox(SandboxScenario(placements: ["mars/mock_tile_1": NetworkScenario(fillRate: 0)])) {
            sandbox, client in
            let body = try json(
                try await ads(
                    sandbox, #"{"context_id":"c","placements":[{"placement":"mock_tile_1","count":1,"content":null}]}"#,
                    client))
            #expect((body["mock_tile_1"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(arguments: [
        ("{oops", "malformed_json"),
        (#"{"placements":[{"placement":"mock_tile_1","count":1}]}"#, "invalid_request"),
        (#"{"context_id":"c","placements":[]}"#, "invalid_request"),
        (
            (#"{"context_id":"c","placements":[{"placement":"mock_tile_1","#
                + #""count":1},{"placement":"mock_tile_1","count":1}]}"#),
            "invalid_request"
        ),
        (#"{"context_id":"c","placements":[{"placement":"mock_spoc_1","count":21}]}"#, "invalid_request"),
        (#"{"context_id":"c","placements":[{"placement":"mock_spoc_1","count":0}]}"#, "invalid_request"),
        (#"{"context_id":"c","placements":[{"placement":"mock_tile_1","count":2}]}"#, "invalid_request"),
        (#"{"context_id":"c","placements":[{"placement":"nope_1","count":1}]}"#, "unsupported_placement"),
        (
            (#"{"context_id":"c","placements":[{"placement":"mock_tile_1","#
                + #""count":1,"content":{"taxonomy":"IAB-9","categories":[]}}]}"#),
            "invalid_request"
        ),
    ])
    func invalidAdRequestIs400(body: String, code: String) async throws {
        try await withSandbox { sandbox, client in
            let response = try await ads(sandbox, body, client)
            #expect(response.status == 400)
            #expect(errorCode(response) == code)
        }
    }
}

@Suite("Sandbox: Chartboost-style", .timeLimit(.minutes(2)))
struct ChartboostSandboxTests {
    let load =
        #"{"request_id":"r1","location":"Main Menu","size":{"width":320,"height":50},"privacy":{"us_privacy":"1YNN"}}"#

    @Test func signedLoadFillsWithTheRequestedSize() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(signed(.post, sandbox, "/chartboost/banner/v1/load", body: load))
            #expect(response.status == 200)
            let body = try json(response)
            #expect((body["size"] as? [String: Int]) == ["width": 320, "height": 50])
            #expect((body["tracking"] as? [String: String])?["impression"]?.contains("e=impression") == true)
            #expect(sandbox.records.adRequestPrivacy == ["us_privacy=1YNN"])
        }
    }

    @Test func wrongSignatureIs401() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                signed(.post, sandbox, "/chartboost/banner/v1/load", body: load, secret: "not-the-secret"))
            #expect(response.status == 401 && errorCode(response) == "invalid_signature")
        }
    }

    @Test func missingAppIDIs401() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(post(sandbox.chartboostBaseURL + "/banner/v1/load", load))
            #expect(response.status == 401 && errorCode(response) == "unauthorized")
        }
    }

    @Test func unsupportedSizeIs400() async throws {
        try await withSandbox { sandbox, client in
            let body = #"{"request_id":"r1","location":"Main Menu","size":{"width":320,"height":100}}"#
            let response = try await client.send(signed(.post, sandbox, "/chartboost/banner/v1/load", body: body))
            #expect(response.status == 400 && errorCode(response) == "invalid_size")
        }
    }

    @Test func noFillIs204() async throws {
        try await withSandbox(SandboxScenario(networks: ["chartboost": NetworkScenario(fillRate: 0)])) {
            sandbox, client in
            let response = try await client.send(signed(.post, sandbox, "/chartboost/banner/v1/load", body: load))
            #expect(response.status == 204 && response.body.isEmpty)
        }
    }

    @Test func signedTrackingIsRecorded() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                signed(.get, sandbox, "/chartboost/banner/v1/track?e=impression&ad=cb_ad_1"))
            #expect(response.status == 204)
            #expect(sandbox.records.trackingHits.first?.query == ["e": "impression", "ad": "cb_ad_1"])
        }
    }
}

@Suite("Sandbox: app-open", .timeLimit(.minutes(2)))
struct AppOpenSandboxTests {
    let testUnit = "ca-app-pub-3940256099942544/5575463023"

    @Test func testAdUnitAlwaysFillsEvenAtZeroFillRate() async throws {
        try await withSandbox(SandboxScenario(networks: ["appopen": NetworkScenario(fillRate: 0)])) { sandbox, client in
            let response = try await client.send(
                HTTPRequest(
                    url: sandbox.appOpenBaseURL + "/appopen/v1/ad?ad_unit_id=\(testUnit)&request_id=r1&us_privacy=1YNN")
            )
            #expect(response.status == 200)
            let body = try json(response)
            #expect(body["ttl_seconds"] as? Int == 14_400)
            #expect(body["ad_unit_id"] as? String == testUnit)
            #expect(sandbox.records.adRequestPrivacy == ["us_privacy=1YNN"])
        }
    }

    @Test func otherUnitsFollowTheFillRate() async throws {
        try await withSandbox(SandboxScenario(networks: ["appopen": NetworkScenario(fillRate: 0)])) { sandbox, client in
            let response = try await client.send(
                HTTPRequest(
                    url: sandbox.appOpenBaseURL
                        + "/appopen/v1/ad?ad_unit_id=ca-app-pub-sandbox/app_open_main&request_id=r1"))
            #expect(response.status == 204)
        }
    }

    @Test func unknownOrMissingAdUnitIs400() async throws {
        try await withSandbox { sandbox, client in
            let unknown = try await client.send(
                HTTPRequest(url: sandbox.appOpenBaseURL + "/appopen/v1/ad?ad_unit_id=nope&request_id=r1"))
            let missing = try await client.send(
                HTTPRequest(url: sandbox.appOpenBaseURL + "/appopen/v1/ad?request_id=r1"))
            #expect(unknown.status == 400 && errorCode(unknown) == "invalid_ad_unit")
            #expect(missing.status == 400)
        }
    }

    @Test func trackingIsRecorded() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                HTTPRequest(url: sandbox.appOpenBaseURL + "/appopen/v1/track?e=click&ad=ao_1"))
            #expect(response.status == 204)
            #expect(sandbox.records.trackingHits.first?.network == "appopen")
        }
    }
}
