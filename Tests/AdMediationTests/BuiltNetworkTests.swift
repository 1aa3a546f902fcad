import AdMediation
import AdMediationTesting
import AdapterKit
import Testing

/// A factory's result carries the network's background work by the network's type (issue 49 item 4): no cast
/// decides whether a built network is ever shut down.
@Suite("Built networks")
struct BuiltNetworkTests {
    /// A network that owns background work and says so in its type.
    final class WorkingNetwork: AdNetwork, BackgroundWork {
        let id = "working"
        let capabilities = AdNetworkCapabilities(formats: [.banner])
        let ended = LockedValue(0)
        func load(_ request: AdRequest) async throws -> AdLoadResult { .noFill(NoFill(reason: "none")) }
        func shutdown() async { ended.withLock { $0 += 1 } }
    }

    @Test func aNetworkWhoseTypeDeclaresBackgroundWorkCarriesIt() async throws {
        let network = WorkingNetwork()
        let built = BuiltNetwork(network)
        let work = try #require(built.backgroundWork, "the type's BackgroundWork conformance is carried")
        await work.shutdown()
        #expect(network.ended.withLock { $0 } == 1, "ending the carried work ends the network's")
    }

    @Test func aNetworkWhoseTypeDeclaresNoBackgroundWorkCarriesNone() {
        let built = BuiltNetwork(ScriptedAdNetwork(id: "plain", formats: [.banner]))
        #expect(built.backgroundWork == nil)
        #expect(built.network.id == "plain")
    }
}
