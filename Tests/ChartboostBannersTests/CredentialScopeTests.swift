import AdMediation
import AdMediationTesting
import AdTransport
import CurlTransport
import Foundation
import Testing

@testable import ChartboostBanners

/// Requests a server received, shared with its handler.
final class RecordingLog: Sendable {
    let list = LockedValue<[LoopbackHTTPServer.Request]>([])
}

/// The app id and signature go to the configured host only; URLs from fills obey the destination policy (issue 31
/// items 4, 5, 7).
@Suite("Chartboost credentials and fill URLs", .timeLimit(.minutes(1)))
struct CredentialScopeTests {
    /// A Chartboost-style server answering every load with a fill whose URLs `urls` chooses, and a second server
    /// (`other`) on another port that records what reaches it.
    final class Fixture: Sendable {
        let server: LoopbackHTTPServer
        let other: LoopbackHTTPServer
        private let received = RecordingLog()
        let curl = CurlHTTPClient()

        init(_ urls: @escaping @Sendable (_ other: String) -> (impression: String, click: String, landing: String))
            throws
        {
            let received = self.received
            let other = try LoopbackHTTPServer { request in
                received.list.withLock { $0.append(request) }
                return .respond(.init(status: 204))
            }
            self.other = other
            server = try LoopbackHTTPServer { request in
                guard request.path.hasSuffix("/banner/v1/load") else { return .respond(.init(status: 204)) }
                let (impression, click, landing) = urls(other.baseURL)
                let body = """
                    {"ad_id":"a1","size":{"width":320,"height":50},"creative":{"type":"html","markup":"<b>ad</b>"},
                     "click_url":"\(landing)","tracking":{"impression":"\(impression)","click":"\(click)"},
                     "ecpm":1,"expires_in_seconds":60}
                    """
                return .respond(
                    .init(headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
            }
        }

        var otherRequests: [LoopbackHTTPServer.Request] { received.list.withLock { $0 } }

        func network(_ destinations: DestinationPolicy? = nil) -> ChartboostNetwork {
            var configuration = ChartboostNetwork.Configuration(
                baseURL: server.baseURL, appID: "app-123", appSignature: "secret-signature")
            configuration.destinations = destinations
            return ChartboostNetwork(configuration: configuration, http: curl)
        }

        func close() async {
            await curl.shutdown()
            server.stop()
            other.stop()
        }
    }

    @Test func aTrackingURLOnAnotherHostGetsNoSignatureAndNoAppID() async throws {
        let f = try Fixture { other in ("\(other)/i", "\(other)/c", "https://advertiser.example.com/") }
        let network = f.network()
        let ad = try #require(try await network.load(AdRequest(placement: "Main", format: .banner(.standard))).ad)
        try await ad.report(.impression)
        // The pings are sent in the background: read the wire once they were (a deadline far above it), not at
        // the end of shutdown's 2 s grace, which a busy machine can exceed.
        let drained = ContinuousClock.now + .seconds(30)
        while network.pendingTracking > 0 && ContinuousClock.now < drained {
            try await Task.sleep(for: .milliseconds(10))
        }
        await network.shutdown()
        let hit = try #require(f.otherRequests.first)
        #expect(hit.header("X-CB-Signature") == nil)
        #expect(hit.header("X-CB-App-Id") == nil)
        await f.close()
    }

    @Test func aTrackingURLOnTheConfiguredHostIsStillSigned() async throws {
        let seen = LockedValue<[LoopbackHTTPServer.Request]>([])
        let server = try LoopbackHTTPServer { request in
            seen.withLock { $0.append(request) }
            return .respond(.init(status: 204))
        }
        let curl = CurlHTTPClient()
        var configuration = ChartboostNetwork.Configuration(
            baseURL: server.baseURL, appID: "app-123", appSignature: "secret-signature")
        configuration.destinations = .strict  // the configured origin is trusted whatever the policy
        let network = ChartboostNetwork(configuration: configuration, http: curl)
        let body =
            #"{"ad_id":"a","size":{"width":320,"height":50},"creative":{"type":"html","markup":"<b/>"},"#
            + #""tracking":{"impression":"\#(server.baseURL)/t?e=i","click":"\#(server.baseURL)/t?e=c"}}"#
        let result = try network.parse(
            Data(body.utf8), request: AdRequest(placement: "Main", format: .banner(.standard)), size: .standard)
        let ad = try #require(result.ad)
        try await ad.report(.impression)
        // The pings are sent in the background: read the wire once they were (a deadline far above it), not at
        // the end of shutdown's 2 s grace, which a busy machine can exceed.
        let drained = ContinuousClock.now + .seconds(30)
        while network.pendingTracking > 0 && ContinuousClock.now < drained {
            try await Task.sleep(for: .milliseconds(10))
        }
        await network.shutdown()
        let hit = try #require(seen.withLock { $0.first })
        #expect(hit.header("X-CB-App-Id") == "app-123")
        #expect(hit.header("X-CB-Signature") != nil)
        await curl.shutdown()
        server.stop()
    }

    @Test(arguments: ["javascript:alert(document.cookie)", "file:///etc/passwd", "data:text/html,x"])
    func aClickURLWithAnotherSchemeIsNotHandedToTheApp(landing: String) async throws {
        let f = try Fixture { other in ("\(other)/i", "\(other)/c", landing) }
        let ad = try #require(try await f.network().load(AdRequest(placement: "Main", format: .banner(.standard))).ad)
        #expect(ad.creative.clickURL == nil)
        await f.close()
    }

    @Test func aTrackingURLToALoopbackPortTheConfigurationDoesNotAllowRefusesTheFill() async throws {
        let f = try Fixture { other in ("\(other)/admin", "\(other)/c", "https://advertiser.example.com/") }
        let error = await loadError(f.network(.strict), AdRequest(placement: "Main", format: .banner(.standard)))
        #expect(error?.code == .invalidResponse)
        #expect(f.otherRequests.isEmpty)
        await f.close()
    }
}
