import AdapterKit
import AppOpenAds
import AppOpenSandbox
import ChartboostBanners
import ChartboostSandbox
import GrowthCatAds
import GrowthCatSandbox
import MARSAds
import MARSSandbox
import OpenRTBBidder
import OpenRTBSandbox
import SandboxRouting

/// One built-in network as the tools see it: the factory that reads its settings and builds it (for `mediate`'s
/// configuration file), and the routes that serve it in the demand sandbox.
public struct BuiltInNetwork: Sendable {
    /// Reads the network's settings and builds it.
    public let factory: any AdNetworkFactory.Type
    /// Makes its routes for one demand sandbox, mounted under `/<network>/` (a module that keeps records gets its own
    /// per sandbox); nil for a network the sandbox does not serve.
    public let routes: (@Sendable () -> any SandboxRouteModule)?

    /// Creates an entry.
    public init(factory: any AdNetworkFactory.Type, routes: (@Sendable () -> any SandboxRouteModule)? = nil) {
        self.factory = factory
        self.routes = routes
    }
}

/// The registry of built-in networks: one line per network, read by `mediate`'s configuration (the factories) and by
/// the demand sandbox (the routes). Adding a network is its folder plus one line here (docs/ARCHITECTURE.md).
public enum BuiltInNetworks {
    /// Every built-in network, in the order `mediate` lists them.
    public static let all: [BuiltInNetwork] = [
        BuiltInNetwork(factory: GrowthCatFactory.self, routes: { GrowthCatRoutes() }),
        BuiltInNetwork(factory: MarsFactory.self, routes: { MarsRoutes() }),
        BuiltInNetwork(factory: ChartboostFactory.self, routes: { ChartboostRoutes() }),
        BuiltInNetwork(factory: AppOpenFactory.self, routes: { AppOpenRoutes() }),
        BuiltInNetwork(factory: OpenRTBFactory.self, routes: { OpenRTBRoutes() }),
    ]

    /// The factories of ``all``, in order.
    public static var factories: [any AdNetworkFactory.Type] { all.map(\.factory) }

    /// The sandbox routes of ``all`` that have them, made for one sandbox.
    public static func makeRouteModules() -> [any SandboxRouteModule] { all.compactMap { $0.routes?() } }
}
