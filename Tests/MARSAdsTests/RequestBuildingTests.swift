import AdMediation
import Foundation
import Testing

@testable import MARSAds

typealias Spec = MozAdsClient.PlacementSpec

@Suite("MARS request building", .timeLimit(.minutes(2)))
struct RequestBuildingTests {
    func json(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    @Test func placementWithContentSerialisesWithTaxonomyAndCategories() {
        let body = MozAdsClient.requestBody(
            contextID: "c",
            placements: [
                Spec(id: "p1", count: 1, content: MozAdsIABContent(taxonomy: .iab2_1, categoryIds: ["52", "73"]))
            ], flags: [:])
        #expect(
            json(body)
                == (#"{"context_id":"c","placements":[{"content":{"categories":["52","#
                    + #""73"],"taxonomy":"IAB-2.1"},"count":1,"placement":"p1"}]}"#)
        )
    }

    @Test func eachTaxonomyHasItsWireValue() {
        #expect(
            MozAdsIABContentTaxonomy.allCases.map(\.rawValue) == [
                "IAB-1.0", "IAB-2.0", "IAB-2.1", "IAB-2.2", "IAB-3.0",
            ])
    }

    @Test func noFlagsLeavesTheFlagsKeyOut() {
        let body = json(MozAdsClient.requestBody(contextID: "c", placements: [Spec(id: "p", count: 1)], flags: [:]))
        #expect(!body.contains("flags"))
    }

    @Test func explicitFalseFlagIsKept() {
        let body = json(
            MozAdsClient.requestBody(
                contextID: "c", placements: [Spec(id: "p", count: 1)], flags: ["contextual_placement": false]))
        #expect(body.contains(#""flags":{"contextual_placement":false}"#))
    }

    @Test func mixedPlacementsProduceTheExactJSONWithExplicitNullContent() {
        let body = MozAdsClient.requestBody(
            contextID: "ctx",
            placements: [
                Spec(id: "newtab_tile_1", count: 1, content: MozAdsIABContent(taxonomy: .iab3_0, categoryIds: ["338"])),
                Spec(id: "p2", count: 1, content: nil),
            ], flags: ["contextual_placement": true])
        #expect(
            json(body)
                == ((#"{"context_id":"ctx","flags":{"contextual_placement":true},"#
                    + #""placements":[{"content":{"categories":["338"],"#)
                    + (#""taxonomy":"IAB-3.0"},"count":1,"placement":"newtab_tile_1"},"#
                        + #"{"content":null,"count":1,"placement":"p2"}]}"#))
        )
    }

    let base = [Spec(id: "a", count: 1), Spec(id: "b", count: 2)]

    @Test func aFlagChangesTheHash() {
        #expect(
            MozAdsClient.requestHash(environment: .prod, placements: base, flags: [:], ohttp: false)
                != MozAdsClient.requestHash(environment: .prod, placements: base, flags: ["x": true], ohttp: false))
    }

    @Test func requestsDifferingOnlyInContextIDShareACacheEntry() async throws {
        let path = tempDB()
        let first = try await marsFixture(
            cache: MozAdsCacheConfig(dbPath: path), contextID: FixedContextIDProvider("context-a"))
        _ = try await first.client.requestTileAds(tile1)
        let second = MozAdsClientBuilder(httpClient: first.curl).environment(
            .custom(baseURL: first.sandbox.marsBaseURL)
        )
        .cacheConfig(MozAdsCacheConfig(dbPath: path)).contextIDProvider(FixedContextIDProvider("context-b")).build()
        _ = try await second.requestTileAds(tile1)
        #expect(
            first.sandbox.records.requestCounts["POST /mars/v1/ads"] == 1,
            "context-b was served context-a's cached answer")
        await first.close()
    }

    @Test func differentPlacementsOrCountsHashDifferently() {
        let h = { MozAdsClient.requestHash(environment: .prod, placements: $0, flags: [:], ohttp: false) }
        #expect(h(base) != h([Spec(id: "a", count: 1), Spec(id: "c", count: 2)]))
        #expect(h(base) != h([Spec(id: "a", count: 1), Spec(id: "b", count: 3)]))
    }

    @Test func ohttpChangesTheHash() {
        #expect(
            MozAdsClient.requestHash(environment: .prod, placements: base, flags: [:], ohttp: false)
                != MozAdsClient.requestHash(environment: .prod, placements: base, flags: [:], ohttp: true))
    }

    @Test func theEnvironmentTakesPartInTheHash() {
        #expect(
            MozAdsClient.requestHash(environment: .prod, placements: base, flags: [:], ohttp: false)
                != MozAdsClient.requestHash(environment: .staging, placements: base, flags: [:], ohttp: false))
    }

    @Test func environmentURLsJoinPathSegments() {
        #expect(MozAdsEnvironment.prod.url("ads") == "https://ads.mozilla.org/v1/ads")
        #expect(MozAdsEnvironment.staging.url("ads") == "https://ads.allizom.org/v1/ads")
        #expect(MozAdsEnvironment.prod.url("/ads") == "https://ads.mozilla.org/v1/ads")
        #expect(MozAdsEnvironment.prod.url("//ads//") == "https://ads.mozilla.org/v1/ads")
    }

    @Test func removingAQueryItemKeepsTheOthersAndDropsAnEmptyQuery() {
        #expect(
            MozAdsClient.removingQueryItem("cap_key", from: "https://t/i?a=1&cap_key=x&b=2") == "https://t/i?a=1&b=2")
        #expect(MozAdsClient.removingQueryItem("cap_key", from: "https://t/i?cap_key=x") == "https://t/i")
    }
}
