import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import Synchronization
import Testing

@testable import AdapterSupport

@Suite("Adapter plumbing", .timeLimit(.minutes(1)))
struct AdapterSupportTests {
    static let everySignal = PrivacySignals(
        gdprApplies: true, tcfConsent: "CP&x=1", usPrivacy: "1YNN", gpp: "DBA/B+", gppSectionIDs: [2, 7], coppa: true,
        underAgeOfConsent: true)

    @Test func everyPrivacySignalBecomesItsWireFieldInOrder() {
        let fields = WirePrivacy.query(Self.everySignal, underAge: .tfua)
        #expect(fields.map(\.0) == ["gdpr", "gdpr_consent", "us_privacy", "gpp", "gpp_sid", "coppa", "tfua"])
        #expect(fields.map(\.1) == ["1", "CP&x=1", "1YNN", "DBA/B+", "2,7", "1", "1"])
    }

    @Test func formEncodingFollowsTheFormStandard() {
        #expect(QueryString.formEncode("a b&c=é*~/") == "a+b%26c%3D%C3%A9*%7E%2F")
        #expect(QueryString.formEncode([("request_hash", "x y"), ("k", "1")]) == "request_hash=x+y&k=1")
    }

    @Test func underAgeFoldsIntoCoppaWhereTheContractHasNoTfua() {
        let signals = PrivacySignals(underAgeOfConsent: true)
        #expect(WirePrivacy.query(signals, underAge: .coppa).map { "\($0.0)=\($0.1)" } == ["coppa=1"])
        #expect(WirePrivacy.query(signals, underAge: .tfua).map { "\($0.0)=\($0.1)" } == ["tfua=1"])
        #expect(WirePrivacy.query(PrivacySignals(), underAge: .tfua).isEmpty, "no signal, no field")
    }

    @Test func theJSONFormKeepsNumbersAndListsTyped() {
        let object = WirePrivacy.json(Self.everySignal, underAge: .coppa)
        #expect(object["gdpr"] as? Int == 1 && object["coppa"] as? Int == 1 && object["tfua"] == nil)
        #expect(object["gpp_sid"] as? [Int] == [2, 7] && object["gdpr_consent"] as? String == "CP&x=1")
    }

    @Test func aQueryValueCanNeverChangeTheQuerysShape() throws {
        let query = QueryString.encode([("gdpr_consent", "a&b=c"), ("gpp", "x y+z/?#~")])
        #expect(query == "gdpr_consent=a%26b%3Dc&gpp=x%20y%2Bz%2F%3F%23~")
        let items = try #require(URLComponents(string: "http://h/p?" + query)?.queryItems)
        #expect(items.map(\.value) == ["a&b=c", "x y+z/?#~"])
    }

    @Test(
        arguments: [
            (2.5, 2.5), (0, 0), (1_000_000, 1_000_000), (-0.01, nil), (1_000_000.5, nil), (.infinity, nil), (.nan, nil),
        ] as [(Double, Double?)])
    func aPriceIsKeptOnlyWhenFiniteAndInRange(value: Double, expected: Double?) {
        #expect(WirePrice.ecpm(value) == expected)
    }

    @Test func trackingSendsEachURLAndTreatsOtherStatusesAsErrors() async throws {
        let paths = Mutex<[String]>([])
        let server = try LoopbackHTTPServer { request in
            paths.withLock { $0.append(request.target) }
            return .respond(.init(status: request.target.hasPrefix("/bad") ? 500 : 204))
        }
        let curl = CurlHTTPClient()
        let ok = TrackingReporter(impression: server.baseURL + "/i?a=1", click: server.baseURL + "/c", http: curl)
        let ad = LoadedAd(
            networkID: "n", placement: "p", format: .interstitial, creative: AdCreative(id: "c", kind: "image"),
            loadedAt: .zero, reporter: ok)
        try await ad.report(.impression)
        try await ad.report(.click)
        try await ad.report(.videoComplete)
        let failing = TrackingReporter(impression: server.baseURL + "/bad", click: server.baseURL + "/c", http: curl)
        let other = LoadedAd(
            networkID: "n", placement: "p", format: .interstitial, creative: AdCreative(id: "d", kind: "image"),
            loadedAt: .zero, reporter: failing)
        do {
            try await other.report(.impression)
            Issue.record("a 500 must fail the event")
        } catch let error as AdError {
            #expect(error.code == .server(status: 500))
        }
        await curl.shutdown()
        server.stop()
        #expect(paths.withLock { $0 } == ["/i?a=1", "/c", "/bad"], "video_complete is not tracked by these contracts")
    }
}
