import AdMediation
import AdapterKit
import AppOpenAds
import AppOpenSandbox
import ChartboostBanners
import ChartboostSandbox
import Foundation
import GrowthCatAds
import GrowthCatSandbox
import MARSAds
import MARSSandbox
import OpenRTBBidder
import OpenRTBSandbox
import SandboxRouting

/// One built-in network as the tools see it: the factory that reads its settings and builds it (for `mediate`'s
/// configuration file), the routes that serve it in the demand sandbox, and its fixture there (a sample line).
public struct BuiltInNetwork: Sendable {
    /// Reads the network's settings and builds it.
    public let factory: any AdNetworkFactory.Type
    /// Makes its routes for one demand sandbox, mounted under `/<network>/` (a module that keeps records gets its own
    /// per sandbox); nil for a network the sandbox does not serve.
    public let routes: (@Sendable () -> any SandboxRouteModule)?
    /// A line the network fills in a sandbox, with the settings that reach it: its routes'
    /// ``SandboxRouteModule/sample`` unless given. The fault matrix, the fuzzers and `mediate --demo` build the
    /// network from it.
    public let sample: SandboxSample?

    /// Creates an entry; `sample` defaults to the routes' own.
    public init(
        factory: any AdNetworkFactory.Type, routes: (@Sendable () -> any SandboxRouteModule)? = nil,
        sample: SandboxSample? = nil
    ) {
        self.factory = factory
        self.routes = routes
        self.sample = sample ?? routes?().sample
    }

    /// The sample line's format; nil without a sample, or when its format or size is not one of the core's or the
    /// factory's.
    public var sampleFormat: AdFormat? {
        guard let sample else { return nil }
        let size = sample.size.flatMap(BannerSize.init(parsing:))
        guard sample.size == nil || size != nil, let format = AdFormat(name: sample.format, size: size),
            AdFormat.Kind.builtIn.contains(format.kind) || factory.formats.contains(format.kind)
        else { return nil }
        return format
    }

    /// The network's `base_url` in a sandbox whose root URL is `rootURL` (`http://127.0.0.1:PORT`): its module's
    /// prefix and its sample's path.
    public func sampleBaseURL(rootURL: String) -> String {
        rootURL + "/" + factory.type + (sample?.path ?? "")
    }

    /// Builds the network as its sample configures it, named `id`, against `baseURL` (``sampleBaseURL(rootURL:)``, or
    /// any URL). Throws ``AdError/Code/configuration`` naming the field, as a configuration file's network would.
    public func makeSample(id: String, baseURL: String, context: AdNetworkFactoryContext) throws(AdError)
        -> BuiltNetwork
    {
        guard let sample else { throw AdError(.configuration, "networks.\(id): \(factory.type) has no sample line") }
        return try Self.make(factory, id: id, baseURL: baseURL, settings: sample.settings, context: context)
    }

    private static func make<Factory: AdNetworkFactory>(
        _ factory: Factory.Type, id: String, baseURL: String, settings: [String: String],
        context: AdNetworkFactoryContext
    ) throws(AdError) -> BuiltNetwork {
        let decoded: Factory.Settings
        do {
            decoded = try JSONDecoder().decode(Factory.Settings.self, from: JSONEncoder().encode(settings))
        } catch {
            throw AdError(.configuration, "networks.\(id): the sample's settings: \(error)")
        }
        return try Factory.make(NetworkConfiguration(id: id, baseURL: baseURL, settings: decoded), context: context)
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

    /// The entries of ``all`` with a sample line whose format is known, in order.
    public static var samples: [BuiltInNetwork] { all.filter { $0.sampleFormat != nil } }

    /// The sandbox routes of ``all`` that have them, made for one sandbox.
    public static func makeRouteModules() -> [any SandboxRouteModule] { all.compactMap { $0.routes?() } }
}
