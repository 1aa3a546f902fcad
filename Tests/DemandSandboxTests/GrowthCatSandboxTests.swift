import AdMediation
import AdTransport
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatSandbox
import TestSupport
import Testing

@Suite("Sandbox: GrowthCat", .timeLimit(.minutes(2)))
struct GrowthCatSandboxTests {
    @Test func bootstrapReturnsAdsConfig() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                HTTPRequest(url: sandbox.growthcatBaseURL + "/v1/sdk/config", headers: gcAuth))
            #expect(response.status == 200)
            let ads = try #require(try json(response)["ads"] as? [String: Any])
            #expect(ads["ads_enabled"] as? Bool == true)
            #expect(ads["formats"] as? [String] == ["banner", "interstitial"])
            #expect(ads["max_offline_ad_events"] as? Int == 500)
        }
    }

    @Test func missingOrUnknownAPIKeyIs401() async throws {
        try await withSandbox { sandbox, client in
            let none = try await client.send(HTTPRequest(url: sandbox.growthcatBaseURL + "/v1/sdk/config"))
            let wrong = try await client.send(
                HTTPRequest(
                    url: sandbox.growthcatBaseURL + "/v1/sdk/config", headers: ["Authorization": "Bearer gc_live_nope"])
            )
            #expect(none.status == 401 && errorCode(none) == "unauthorized")
            #expect(wrong.status == 401)
        }
    }

    @Test func rewardedCatalogCarriesRewardAndClosePolicy() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                HTTPRequest(
                    url: sandbox.growthcatBaseURL + "/v1/ads/catalog?placement_key=rewarded_coins", headers: gcAuth))
            let body = try json(response)
            #expect(body["placement_key"] as? String == "rewarded_coins")
            let ad = try #require((body["ads"] as? [[String: Any]])?.first)
            let placement = try #require(ad["placement"] as? [String: Any])
            #expect(placement["reward_enabled"] as? Bool == true)
            #expect(placement["reward_name"] as? String == "Coins")
            #expect(placement["minimum_view_seconds"] as? Double == 15)
            #expect((ad["creative"] as? [String: Any])?["creative_type"] as? String == "video")
            #expect((ad["tracking"] as? [String: Any])?["token"] is String)
        }
    }

    @Test func appStoreCreativesCarryTheirPresentation() async throws {
        try await withSandbox { sandbox, client in
            for (key, presentation) in [("install_offer", "overlay"), ("store_page", "product_view")] {
                let body = try json(
                    try await client.send(
                        HTTPRequest(
                            url: sandbox.growthcatBaseURL + "/v1/ads/catalog?placement_key=\(key)", headers: gcAuth)))
                let creative = try #require(((body["ads"] as? [[String: Any]])?.first)?["creative"] as? [String: Any])
                #expect(creative["creative_type"] as? String == "app_store")
                #expect((creative["store_kit"] as? [String: Any])?["presentation"] as? String == presentation)
            }
        }
    }

    @Test func unknownPlacementIs404() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                HTTPRequest(url: sandbox.growthcatBaseURL + "/v1/ads/catalog?placement_key=nope", headers: gcAuth))
            #expect(response.status == 404 && errorCode(response) == "invalid_placement")
        }
    }

    @Test func appScopedCatalogAliasIsTheSameCall() async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                HTTPRequest(
                    url: sandbox.growthcatBaseURL + "/v1/sdk/apps/app_sandbox/ads/catalog?placement_key=home_banner",
                    headers: gcAuth))
            #expect(response.status == 200)
            #expect((try json(response)["ads"] as? [Any])?.count == 1)
        }
    }

    @Test func serveByFormatReturnsAdsOfThatFormatWithoutPlacement() async throws {
        try await withSandbox { sandbox, client in
            let body = try json(
                try await client.send(
                    HTTPRequest(url: sandbox.growthcatBaseURL + "/v1/ads/serve?format=banner", headers: gcAuth)))
            let ads = try #require(body["ads"] as? [[String: Any]])
            #expect(!ads.isEmpty)
            #expect(ads.allSatisfy { $0["placement"] is NSNull })
            let bad = try await client.send(
                HTTPRequest(url: sandbox.growthcatBaseURL + "/v1/ads/serve?format=poster", headers: gcAuth))
            #expect(bad.status == 400)
        }
    }

    @Test func noFillIsAnEmptyAdsList() async throws {
        try await withSandbox(SandboxScenario(networks: ["growthcat": NetworkScenario(fillRate: 0)])) {
            sandbox, client in
            let body = try json(
                try await client.send(
                    HTTPRequest(
                        url: sandbox.growthcatBaseURL + "/v1/ads/catalog?placement_key=home_banner", headers: gcAuth)))
            #expect((body["ads"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func creativeAssetsAreServedAsRealBytes() async throws {
        try await withSandbox { sandbox, client in
            let body = try json(
                try await client.send(
                    HTTPRequest(
                        url: sandbox.growthcatBaseURL + "/v1/ads/catalog?placement_key=level_complete", headers: gcAuth)
                ))
            let url = try #require(
                (((body["ads"] as? [[String: Any]])?.first)?["creative"] as? [String: Any])?["public_asset_url"]
                    as? String)
            let first = try await client.send(HTTPRequest(url: url))
            let again = try await client.send(HTTPRequest(url: url))
            #expect(first.status == 200 && first.body.count == 4096)
            #expect(Array(first.body.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
            #expect(first.body == again.body, "the same URL always gives the same bytes")
        }
    }

    @Test func eventsAreDeduplicatedBySdkEventID() async throws {
        try await withSandbox { sandbox, client in
            let batch =
                (#"{"events":[{"sdk_event_id":"e1","event_name":"impression"},{"sdk_event_id":"e2","#
                    + #""event_name":"video_progress","metadata":{"progress_pct":"50"}}]}"#)
            let first = try await client.send(post(sandbox.growthcatBaseURL + "/v1/ads/events", batch, headers: gcAuth))
            let second = try await client.send(
                post(sandbox.growthcatBaseURL + "/v1/ads/events", batch, headers: gcAuth))
            #expect(first.status == 202)
            #expect(try json(first)["accepted"] as? Int == 2)
            #expect(try json(second)["duplicates"] as? Int == 2)
            let records = sandbox.growthcatRecords
            #expect(records.events.map(\.sdkEventID) == ["e1", "e2"])
            #expect(records.duplicates == 2)
            #expect(records.batches == 2)
            #expect(records.events[1].metadata["progress_pct"] == "50")
        }
    }

    @Test(arguments: [
        ("{not json", "malformed_json"),
        (#"{"events":"x"}"#, "invalid_events"),
        (#"{"events":[]}"#, "invalid_events"),
        (#"{"events":[{"event_name":"impression"}]}"#, "invalid_event"),
        (#"{"events":[{"sdk_event_id":"e","event_name":"reward_validated"}]}"#, "invalid_event"),
    ])
    func invalidEventBatchIs400(body: String, code: String) async throws {
        try await withSandbox { sandbox, client in
            let response = try await client.send(
                post(sandbox.growthcatBaseURL + "/v1/ads/events", body, headers: gcAuth))
            #expect(response.status == 400)
            #expect(errorCode(response) == code)
        }
    }

    @Test func batchOfMoreThan100EventsIs400() async throws {
        try await withSandbox { sandbox, client in
            let events = (0..<101).map { #"{"sdk_event_id":"e\#($0)","event_name":"click"}"# }.joined(separator: ",")
            let response = try await client.send(
                post(sandbox.growthcatBaseURL + "/v1/ads/events", #"{"events":[\#(events)]}"#, headers: gcAuth))
            #expect(response.status == 400 && errorCode(response) == "batch_too_large")
        }
    }

    private func rewardedAd(_ sandbox: RunningSandbox, _ client: CurlHTTPClient) async throws -> (
        allocation: String, token: String
    ) {
        let body = try json(
            try await client.send(
                HTTPRequest(
                    url: sandbox.growthcatBaseURL + "/v1/ads/catalog?placement_key=rewarded_coins", headers: gcAuth)))
        let tracking = try #require(((body["ads"] as? [[String: Any]])?.first)?["tracking"] as? [String: Any])
        return (try #require(tracking["allocation_id"] as? String), try #require(tracking["token"] as? String))
    }

    @Test func rewardIsValidatedOnceAfterTheMinimumViewTime() async throws {
        try await withSandbox { sandbox, client in
            let (allocation, token) = try await rewardedAd(sandbox, client)
            let request =
                (#"{"allocation_id":"\#(allocation)","token":"\#(token)","#
                    + #""app_user_id":"u1","viewed_seconds":16,"completed":true}"#)
            let granted = try json(
                try await client.send(
                    post(sandbox.growthcatBaseURL + "/v1/ads/reward/validate", request, headers: gcAuth)))
            #expect(granted["reward_validated"] as? Bool == true)
            #expect((granted["reward"] as? [String: Any])?["amount"] as? Int == 50)
            let again = try json(
                try await client.send(
                    post(sandbox.growthcatBaseURL + "/v1/ads/reward/validate", request, headers: gcAuth)))
            #expect(again["reward_validated"] as? Bool == false, "a token is redeemed once")
            #expect(sandbox.growthcatRecords.rewardValidations.map(\.validated) == [true, false])
        }
    }

    /// Issue 43 item 4: the client retries a 5xx or a lost answer with the same `sdk_event_id` ("Stable
    /// sdk_event_id values prevent double-counting on retry"); the sandbox redeemed per token and answered the retry
    /// `reward_validated: false` after granting the first — the server granted, the user got nothing. A repeated id
    /// gets the first answer again; a new id for the redeemed token is still refused.
    @Test func aRetriedValidationGetsTheFirstAnswerAgain() async throws {
        try await withSandbox { sandbox, client in
            let (allocation, token) = try await rewardedAd(sandbox, client)
            func validate(_ eventID: String) async throws -> [String: Any] {
                let body =
                    (#"{"allocation_id":"\#(allocation)","token":"\#(token)","app_user_id":"u1","#
                        + #""viewed_seconds":16,"completed":true,"sdk_event_id":"\#(eventID)"}"#)
                return try json(
                    try await client.send(
                        post(sandbox.growthcatBaseURL + "/v1/ads/reward/validate", body, headers: gcAuth)))
            }
            let first = try await validate("e1")
            let retry = try await validate("e1")
            #expect(first["reward_validated"] as? Bool == true)
            #expect(retry["reward_validated"] as? Bool == true, "the retry of a granted validation")
            #expect((retry["reward"] as? [String: Any])?["amount"] as? Int == 50)
            let other = try await validate("e2")
            #expect(other["reward_validated"] as? Bool == false, "another view cannot redeem the token again")
        }
    }

    /// Issue 43 item 7: faults on reward validation, bounded per validation. A 503 or a reset is not processed; a lost
    /// answer and a late one (past the client's timeout) are — the reward granted and recorded — so the retry with the
    /// same `sdk_event_id` gets the grant again; `max_validation_faults` lets the retry through.
    @Test(arguments: ValidationFault.Kind.allCases)
    func aFaultedValidationIsBoundedAndItsRetryGetsTheFirstAnswer(kind: ValidationFault.Kind) async throws {
        var growthcat = NetworkScenario()
        // The late answer comes after the request's timeout; both far above what a busy machine needs to answer.
        growthcat.validationFaults = [ValidationFault(kind, delayMs: 6_000)]
        growthcat.maxValidationFaults = 1
        try await withSandbox(SandboxScenario(networks: ["growthcat": growthcat])) { sandbox, client in
            let (allocation, token) = try await rewardedAd(sandbox, client)
            var request = post(
                sandbox.growthcatBaseURL + "/v1/ads/reward/validate",
                #"{"allocation_id":"\#(allocation)","token":"\#(token)","placement_key":"rewarded_coins","#
                    + #""app_user_id":"u1","viewed_seconds":16,"completed":true,"sdk_event_id":"e1"}"#,
                headers: gcAuth)
            // Only the late answer is about time (it comes after this timeout); for the others the timeout is a hang
            // guard, so a busy machine cannot turn a 503 into a timeout.
            request.timeout = kind == .lateAnswer ? .seconds(5) : HangGuard.request
            // The first attempt on a connection of its own: libcurl sends a request again, by itself, when a reused
            // connection dies before any answer — which a reset or a lost answer on the catalog's connection is.
            let first = try await withCurlHTTPClient { fresh -> Result<HTTPResponse, any Error> in
                do { return .success(try await fresh.send(request)) } catch { return .failure(error) }
            }
            switch kind {
            case .status: #expect((try? first.get())?.status == 503)
            case .reset, .lostAnswer, .lateAnswer: #expect(throws: (any Error).self) { try first.get() }
            }
            let retry = try json(try await client.send(request))
            #expect(retry["reward_validated"] as? Bool == true, "\(kind)")
            let records = sandbox.growthcatRecords
            let processed = kind == .lostAnswer || kind == .lateAnswer
            #expect(records.rewardValidations.map(\.validated) == (processed ? [true, true] : [true]))
            #expect(records.rewardValidations.map(\.replayed) == (processed ? [false, true] : [false]))
            #expect(records.rewardValidations.first?.fault == (processed ? kind.rawValue : nil))
            #expect(records.rewardValidationFaults == [kind.rawValue: 1])
        }
    }

    @Test func rewardIsRefusedUnderTheMinimumViewTimeOrWithoutUser() async throws {
        try await withSandbox { sandbox, client in
            let (allocation, token) = try await rewardedAd(sandbox, client)
            let short =
                (#"{"allocation_id":"\#(allocation)","token":"\#(token)","#
                    + #""app_user_id":"u1","viewed_seconds":3,"completed":false}"#)
            let anonymous =
                #"{"allocation_id":"\#(allocation)","token":"\#(token)","viewed_seconds":30,"completed":true}"#
            for body in [short, anonymous] {
                let answer = try json(
                    try await client.send(
                        post(sandbox.growthcatBaseURL + "/v1/ads/reward/validate", body, headers: gcAuth)))
                #expect(answer["reward_validated"] as? Bool == false)
                #expect(answer["reward"] is NSNull)
            }
        }
    }

    @Test func privacyQueryParametersAreRecorded() async throws {
        try await withSandbox { sandbox, client in
            _ = try await client.send(
                HTTPRequest(
                    url: sandbox.growthcatBaseURL
                        + "/v1/ads/catalog?placement_key=home_banner&gdpr=1&gdpr_consent=CPX&us_privacy=1YNN",
                    headers: gcAuth))
            #expect(sandbox.records.adRequestPrivacy == ["gdpr=1&gdpr_consent=CPX&us_privacy=1YNN"])
        }
    }
}
