import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import MARSAds
import Testing

/// Issue 42: reporting an event never waits for tracking. MARS's callbacks were sent inline, so a callback endpoint
/// that did not answer held the ad's event lane (and the app's call) for the client's 60 s deadline.
@Suite("MARS: callbacks never hold the event that sends them", .timeLimit(.minutes(1)))
struct MarsCallbackLaneTests {
    /// A MARS server on loopback: `/v1/ads` answers one tile whose callbacks point back at it; each callback is
    /// answered only once the test opens the gate (or after 30 s), as a hung tracking endpoint would.
    final class HeldCallbacks: Sendable {
        /// What the server's handler shares with the test.
        final class Shared: Sendable {
            let gate = DispatchSemaphore(value: 0)
            let answered = LockedValue<[String]>([])
            let port = LockedValue(0)
        }

        let server: LoopbackHTTPServer
        private let shared = Shared()

        init() throws {
            let shared = self.shared
            server = try LoopbackHTTPServer { request in
                if request.path.hasPrefix("/cb/") {
                    // Held on the server's own connection thread, never on the test's tasks.
                    _ = shared.gate.wait(timeout: .now() + 30)
                    shared.gate.signal()  // an open gate stays open for the callbacks after this one
                    shared.answered.withLock { $0.append(request.path) }
                    return .respond(.text("ok"))
                }
                let base = "http://127.0.0.1:\(shared.port.withLock { $0 })"
                let tile =
                    #"{"mock_tile_1":[{"format":"tile","url":"https://a.example/1","#
                    + #""image_url":"https://a.example/1.png","block_key":"bk_1","name":"Tile","#
                    + #""callbacks":{"click":"\#(base)/cb/click?x=1","impression":"\#(base)/cb/impression?x=1","#
                    + #""report":null}}]}"#
                return .respond(.init(headers: [("Content-Type", "application/json")], body: Array(tile.utf8)))
            }
            shared.port.withLock { $0 = server.port }
        }

        /// Lets every held callback be answered.
        func open() { shared.gate.signal() }
        /// The callback paths answered, in order.
        var answered: [String] { shared.answered.withLock { $0 } }
    }

    /// The ad as the app gets it: the network's own, through a Mediator, or through a Mediator nested in another.
    static func load(_ network: MarsNetwork, depth: Int) async throws -> LoadedAd? {
        var source: any AdNetwork = network
        var placement = "mock_tile_1"
        for level in 0..<depth {
            let id = "m\(level)"
            source = try Mediator(
                id: id, networks: [source],
                configuration: MediationConfiguration(placements: [
                    id: PlacementConfiguration(
                        format: .tile,
                        lines: [WaterfallLine(network: source.id, placement: placement, timeout: .seconds(20))],
                        deadline: .seconds(20))
                ]))
            placement = id
        }
        return try await source.load(AdRequest(placement: placement, format: .tile)).ad
    }

    /// Bare (0), through a Mediator (1) and through a nested Mediator (2).
    @Test(arguments: [0, 1, 2])
    func anImpressionAndAClickAreQueuedWhileTheirCallbacksAreUnanswered(depth: Int) async throws {
        let server = try HeldCallbacks()
        defer { server.server.stop() }
        let curl = CurlHTTPClient()
        let client = MozAdsClientBuilder(httpClient: curl).environment(.custom(baseURL: server.server.baseURL + "/v1/"))
            .build()
        let network = MarsNetwork(client: client)
        let ad = try #require(try await Self.load(network, depth: depth))
        // Neither call may wait for its callback's answer: the server holds both until the gate opens below.
        #expect(try await ad.deliver(.impression) == .queued)
        #expect(try await ad.deliver(.click) == .queued)
        #expect(server.answered.isEmpty, "no callback was answered yet: nothing waited for one")
        server.open()
        // The queue sends both once the server answers; read the outcome once both were answered (or at a deadline
        // far above two loopback answers on a busy machine), then end the sender.
        let deadline = ContinuousClock.now + .seconds(30)
        while server.answered.count < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        await network.shutdown()
        #expect(server.answered == ["/cb/impression", "/cb/click"], "both sent once, the impression first")
        await curl.shutdown()
    }
}
