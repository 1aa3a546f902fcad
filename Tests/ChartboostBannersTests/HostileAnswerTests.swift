import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdTransport
import Foundation
import Testing

@testable import ChartboostBanners

/// An HTTP client that is never called: the decoder tests feed bodies straight to the parser.
struct UnusedHTTPClient: HTTPClient {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse { throw HTTPClientError(.other, "not used") }
}

@Suite("Chartboost answers with hostile numbers", .timeLimit(.minutes(2)))
struct ChartboostHostileAnswerTests {
    static let valid = """
        {"ad_id": "a1", "size": {"width": 320, "height": 50}, "creative": {"type": "image", "url": \
        "https://cdn.example/a.png"},
         "tracking": {"impression": "https://t.example/i", "click": "https://t.example/c"}, "ecpm": 2.5, \
        "expires_in_seconds": 600}
        """
    let clock = ManualAdClock()
    var network: ChartboostNetwork {
        ChartboostNetwork(
            configuration: .init(baseURL: "https://cb.example", appID: "a", appSignature: "s"),
            http: UnusedHTTPClient(), clock: clock)
    }
    let request = AdRequest(placement: "home", format: .banner(.standard))

    func parse(_ path: [String], _ value: HostileJSON.Value) throws -> Result<AdLoadResult, AdError> {
        let body = try #require(HostileJSON.replacing(path, in: Self.valid, with: value))
        do { return .success(try network.parse(body, request: request, size: .standard)) } catch {
            return .failure(try #require(error as? AdError))
        }
    }

    @Test(arguments: HostileJSON.numeric)
    func expiryClampsToSevenDaysAndANegativeOrUnreadableExpiryIsAnInvalidResponse(value: HostileJSON.Value) throws {
        let result = try parse(["expires_in_seconds"], value)
        switch value.name {
        case "huge", "int64_max": #expect(try result.get().ad?.expiresAt == .zero + .seconds(604_800))
        case "fraction": #expect(try result.get().ad?.expiresAt == .zero + .milliseconds(500))
        case "null": #expect(try result.get().ad?.expiresAt == nil)
        default: #expect(result.failureCode == .invalidResponse, "\(value)")
        }
    }

    @Test(arguments: HostileJSON.numeric)
    func aPriceOutOfRangeLeavesTheAdUnpriced(value: HostileJSON.Value) throws {
        let result = try parse(["ecpm"], value)
        switch value.name {
        case "wrong_type", "empty_string", "boolean": #expect(result.failureCode == .invalidResponse)
        case "fraction": #expect(try result.get().ad?.ecpm == 0.5)
        default: #expect(try result.get().ad != nil && (try result.get().ad?.ecpm) == nil, "\(value)")
        }
    }

    @Test(arguments: ["width", "height"], HostileJSON.numeric)
    func aSizeThatIsNotTheAskedSizeIsNoFillOrAnInvalidResponse(field: String, value: HostileJSON.Value) throws {
        let result = try parse(["size", field], value)
        // Whole numbers that are not the asked size are a size mismatch (no fill); everything else is unreadable.
        if value.name == "negative" || value.name == "int64_max" {
            #expect(try result.get().ad == nil)
        } else {
            #expect(result.failureCode == .invalidResponse, "\(field) = \(value)")
        }
    }

    @Test func aDeeplyNestedAnswerIsAnInvalidResponseNamingTheLimit() {
        let body = Data((#"{"ad_id": "# + String(repeating: "[", count: 100_000)).utf8)
        #expect(throws: AdError(.invalidResponse, "Chartboost banner for home: nesting deeper than 32 levels")) {
            try network.parse(body, request: request, size: .standard)
        }
    }
}

extension Result where Failure == AdError {
    /// The error's code, or nil on success.
    var failureCode: AdError.Code? { if case .failure(let error) = self { error.code } else { nil } }
}
