import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdTransport
import Foundation
import Testing

@testable import AppOpenAds

/// An HTTP client that is never called: the decoder tests feed bodies straight to the parser.
struct UnusedHTTPClient: HTTPClient {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse { throw HTTPClientError(.other, "not used") }
}

@Suite("App-open answers with hostile numbers", .timeLimit(.minutes(2)))
struct AppOpenHostileAnswerTests {
    static let valid = """
        {"ad_id": "a1", "creative": {"type": "image", "url": "https://cdn.example/a.png"},
         "tracking": {"impression": "https://t.example/i", "click": "https://t.example/c"}, "ecpm": 2.5, \
        "ttl_seconds": 600}
        """
    let clock = ManualAdClock()
    var network: AppOpenNetwork {
        AppOpenNetwork(configuration: .init(baseURL: "https://ao.example"), http: UnusedHTTPClient(), clock: clock)
    }
    let request = AdRequest(placement: "splash", format: .appOpen)

    func parse(_ path: [String], _ value: HostileJSON.Value) throws -> Result<LoadedAd, AdError> {
        let body = try #require(HostileJSON.replacing(path, in: Self.valid, with: value))
        do { return .success(try network.parse(body, request: request)) } catch {
            return .failure(try #require(error as? AdError))
        }
    }

    @Test(arguments: HostileJSON.numeric)
    func aTTLOnlyShortensTheFourHourValidityAndUnreadableTTLsAreIgnoredOrInvalid(value: HostileJSON.Value) throws {
        let result = try parse(["ttl_seconds"], value)
        switch value.name {
        case "huge", "int64_max", "negative", "huge_negative", "null":
            #expect(try result.get().expiresAt == .zero + .seconds(4 * 3600), "\(value): the 4-hour maximum applies")
        case "fraction": #expect(try result.get().expiresAt == .zero + .milliseconds(500))
        default:
            if case .failure(let error) = result {
                #expect(error.code == .invalidResponse)
            } else {
                Issue.record("\(value) decoded")
            }
        }
    }

    @Test(arguments: HostileJSON.numeric)
    func aPriceOutOfRangeLeavesTheAdUnpriced(value: HostileJSON.Value) throws {
        let result = try parse(["ecpm"], value)
        switch value.name {
        case "wrong_type", "empty_string", "boolean":
            if case .failure(let error) = result {
                #expect(error.code == .invalidResponse)
            } else {
                Issue.record("\(value) decoded")
            }
        case "fraction": #expect(try result.get().ecpm == 0.5)
        default: #expect(try result.get().ecpm == nil, "\(value)")
        }
    }

    @Test func aDeeplyNestedAnswerIsAnInvalidResponseNamingTheLimit() {
        let body = Data((#"{"ad_id": "# + String(repeating: "{", count: 100_000)).utf8)
        #expect(throws: AdError(.invalidResponse, "app-open ad for splash: nesting deeper than 32 levels")) {
            try network.parse(body, request: request)
        }
    }
}
