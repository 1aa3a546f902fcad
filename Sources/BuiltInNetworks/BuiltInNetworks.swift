import AdapterKit
import AppOpenAds
import AppOpenSandbox
import ChartboostBanners
import ChartboostSandbox
import GrowthCatAds
import MARSAds
import OpenRTBBidder
import SandboxRouting

/// One built-in network as the tools see it: the factory that reads its settings and builds it (for `mediate`'s
/// configuration file), and the routes that serve it in the demand sandbox.
public struct BuiltInNetwork: Sendable {
    /// Reads the network's settings and builds it.
    public let factory: any AdNetworkFactory.Type
    /// Its routes in the demand sandbox, mounted under `/<network>/`; nil while the sandbox still serves the network
    /// with routes of its own (GrowthCat, MARS and OpenRTB: their answers share the sandbox's reward tokens,
    /// OHTTP gateway and notice records).
    public let routes: (any SandboxRouteModule)?

    /// Creates an entry.
    public init(factory: any AdNetworkFactory.Type, routes: (any SandboxRouteModule)? = nil) {
        self.factory = factory
        self.routes = routes
    }
}

/// The registry of built-in networks: one line per network, read by `mediate`'s configuration (the factories) and by
/// the demand sandbox (the routes). Adding a network is its folder plus one line here (docs/ARCHITECTURE.md).
public enum BuiltInNetworks {
    /// Every built-in network, in the order `mediate` lists them.
    public static let all: [BuiltInNetwork] = [
        BuiltInNetwork(factory: GrowthCatFactory.self),
        BuiltInNetwork(factory: MarsFactory.self),
        BuiltInNetwork(factory: ChartboostFactory.self, routes: ChartboostRoutes()),
        BuiltInNetwork(factory: AppOpenFactory.self, routes: AppOpenRoutes()),
        BuiltInNetwork(factory: OpenRTBFactory.self),
    ]

    /// The factories of ``all``, in order.
    public static var factories: [any AdNetworkFactory.Type] { all.map(\.factory) }

    /// The sandbox routes of ``all`` that have them.
    public static var routeModules: [any SandboxRouteModule] { all.compactMap(\.routes) }
}
