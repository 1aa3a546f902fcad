import AdMediation
import AdNetworkConformance
import AdTransport
import Foundation
import Testing

@testable import MARSAds

@Suite("MARS answers with hostile numbers", .timeLimit(.minutes(2)))
struct MarsHostileAnswerTests {
    static let validSpoc = """
        {"spocs": [{"format": "spoc", "url": "https://a.example/s", "image_url": "https://img.example/s.png", \
        "block_key": "bk",
          "title": "T", "domain": "d.example", "excerpt": "E", "sponsor": "S",
          "caps": {"cap_key": "ck", "day": 10}, "ranking": {"priority": 3, "item_score": 0.5, \
        "personalization_models": {"m": 1}},
          "callbacks": {"click": "https://t.example/c", "impression": "https://t.example/i", "report": null}}]}
        """

    func spoc(_ path: [String], _ value: HostileJSON.Value) throws -> MozAdsSpoc? {
        let body = try #require(HostileJSON.replacing(path, in: Self.validSpoc, with: value))
        let items = try MozAdsClient.parseAnswer(HTTPResponse(status: 200, body: body)) { _, _ in }
        let item = try #require(items["spocs"]?.first, "the item and its callbacks decode")
        return MozAdsClient.spoc(item)
    }

    @Test(arguments: [["caps", "day"], ["ranking", "priority"]], HostileJSON.numeric)
    func aU32FieldThatIsNotAWholeNumberInRangeMakesTheSpocInvalid(field: [String], value: HostileJSON.Value) throws {
        let decoded = try spoc(["spocs", "0"] + field, value)
        #expect(decoded == nil, "\(field) = \(value)")
    }

    @Test func aU32FieldAtItsMaximumIsKept() throws {
        let decoded = try spoc(["spocs", "0", "caps", "day"], .init(name: "u32_max", json: "4294967295"))
        #expect(decoded?.caps.day == UInt32.max)
    }

    @Test(arguments: HostileJSON.numeric)
    func anItemScoreThatIsNotAFiniteNumberMakesTheSpocInvalid(value: HostileJSON.Value) throws {
        let decoded = try spoc(["spocs", "0", "ranking", "item_score"], value)
        switch value.name {
        case "huge": #expect(decoded?.ranking.itemScore == 1e308)
        case "huge_negative": #expect(decoded?.ranking.itemScore == -1e308)
        case "int64_max": #expect(decoded?.ranking.itemScore == 9.223372036854775807e18)
        case "negative": #expect(decoded?.ranking.itemScore == -5)
        case "fraction": #expect(decoded?.ranking.itemScore == 0.5)
        default: #expect(decoded == nil, "\(value)")
        }
    }

    @Test(arguments: HostileJSON.numeric)
    func aPersonalizationModelThatIsNotAU32IsDroppedAndTheSpocKept(value: HostileJSON.Value) throws {
        let decoded = try #require(try spoc(["spocs", "0", "ranking", "personalization_models", "m"], value))
        #expect(decoded.ranking.personalizationModels["m"] == nil, "\(value)")
    }

    @Test(arguments: [
        ("max-age=600", Int64(600)), ("max-age=-5", nil), ("max-age=99999999999999999999999", Int64.max),
        ("max-age=1e308", nil),
        ("max-age=", nil), ("no-store, max-age=9223372036854775807", Int64.max),
    ])
    func cacheControlMaxAgeIsReadCheckedAndNeverTraps(header: String, expected: Int64?) {
        #expect(CacheControl(header).maxAge == expected)
    }

    @Test func aDeeplyNestedAnswerIsAJSONErrorNamingTheLimit() {
        let body = Data((#"{"spocs": "# + String(repeating: "[", count: 100_000)).utf8)
        #expect(
            throws: AdError.mars(code: .json, message: "the response breaks a limit: nesting deeper than 32 levels")
        ) {
            try MozAdsClient.parseAnswer(HTTPResponse(status: 200, body: body)) { _, _ in }
        }
    }
}
