import AdMediation
import AdMediationTesting
import AdapterKit
import CurlTransport
import Foundation
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

    @Test func theJSONFormKeepsNumbersAndListsTyped() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(
            decoding: try encoder.encode(WirePrivacy.object(Self.everySignal, underAge: .coppa)), as: UTF8.self)
        #expect(text.contains(#""gdpr":1"#) && text.contains(#""coppa":1"#) && !text.contains("tfua"), "\(text)")
        #expect(text.contains(#""gpp_sid":[2,7]"#) && text.contains(#""gdpr_consent":"CP&x=1""#), "\(text)")
    }

    @Test func noSignalWritesAnEmptyObject() {
        #expect(WirePrivacy.object(PrivacySignals(), underAge: .coppa).isEmpty)
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

    /// Polls `condition` until it holds, at most 20 s (real time, far above what the scenario needs).
    func eventually(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("the condition did not hold within 20 s", sourceLocation: sourceLocation)
                return
            }
            await Task.yield()
        }
    }

    @Test func trackingQueuesTheImpressionAndClickURLsAndSendsThemInTheBackground() async throws {
        let paths = LockedValue<[String]>([])
        let server = try LoopbackHTTPServer { request in
            paths.withLock { $0.append(request.target) }
            return .respond(.init(status: 204))
        }
        let curl = CurlHTTPClient()
        let sender = BackgroundSender(clock: SystemAdClock(), limits: .tracking)
        let reporter = TrackingReporter(
            impression: server.baseURL + "/i?a=1", click: server.baseURL + "/c", policy: .localDevelopment,
            sender: sender,
            http: curl)
        let ad = LoadedAd(
            networkID: "n", placement: "p", format: .interstitial, creative: AdCreative(id: "c", kind: "image"),
            loadedAt: .zero, reporter: reporter)
        #expect(try await ad.deliver(.impression) == .queued)
        #expect(try await ad.deliver(.click) == .queued)
        #expect(try await ad.deliver(.videoComplete) == .notSent, "video_complete is not tracked by these contracts")
        await eventually { paths.withLock { $0.count } == 2 }
        await sender.shutdown()
        await curl.shutdown()
        server.stop()
        #expect(paths.withLock { $0 }.sorted() == ["/c", "/i?a=1"], "sent concurrently, in any order")
    }

    /// Issue 42: a 503 on the impression ping un-recorded the impression, so every later tap on the visible ad was an
    /// `invalid_state` error and no click was tracked. What the user saw is local truth: the click goes through at
    /// once, each tap is tracked, and the impression ping is retried with back-off in the background until it lands.
    @Test func aFailedImpressionPingIsRetriedInTheBackgroundAndNeverBlocksTheClicks() async throws {
        let paths = LockedValue<[String]>([])
        let server = try LoopbackHTTPServer { request in
            let earlier = paths.withLock { list in
                defer { list.append(request.target) }
                return list.filter { $0 == "/i" }.count
            }
            return .respond(.init(status: request.target == "/i" && earlier == 0 ? 503 : 204))
        }
        let curl = CurlHTTPClient()
        let clock = ManualAdClock()
        let sender = BackgroundSender(clock: clock, limits: .tracking)
        let reporter = TrackingReporter(
            impression: server.baseURL + "/i", click: server.baseURL + "/c", policy: .localDevelopment, sender: sender,
            http: curl)
        let ad = LoadedAd(
            networkID: "n", placement: "p", format: .banner(.standard), creative: AdCreative(id: "c", kind: "image"),
            loadedAt: .zero, reporter: reporter)
        #expect(try await ad.deliver(.impression) == .queued)
        await eventually { paths.withLock { $0 }.contains("/i") }
        #expect(try await ad.deliver(.click, repeating: true) == .queued, "the impression ping's 503 blocks nothing")
        #expect(try await ad.deliver(.click, repeating: true) == .queued, "each tap is a click")
        await eventually { paths.withLock { $0.filter { $0 == "/c" }.count } == 2 && clock.sleeperCount == 1 }
        await clock.advance(by: .milliseconds(250))  // the impression ping's back-off
        await eventually { paths.withLock { $0.filter { $0 == "/i" }.count } == 2 }
        await sender.shutdown()
        await curl.shutdown()
        server.stop()
        #expect(sender.failed == 0 && sender.dropped == 0)
    }
}
