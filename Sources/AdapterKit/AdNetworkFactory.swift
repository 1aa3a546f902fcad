import AdMediation
import AdTransport
import Foundation

/// A network type's own settings, as its object in a configuration file spells them (`{"type": "chartboost",
/// "base_url": …, "app_id": …}`: everything but `type` and `base_url`). Each factory declares one
/// (``AdNetworkFactory/Settings``); decoding errors name the field (`DecodingError` coding paths), and a key that
/// ``Key`` does not list is refused before decoding, naming the nearest valid key.
public protocol AdNetworkSettings: Decodable, Sendable {
    /// Every key the settings accept (usually their `CodingKeys`). A nested object checks its own keys
    /// (``Swift/Decoder/rejectUnknownKeys(_:besides:)``).
    associatedtype Key: CodingKey & CaseIterable
}

/// The settings of a network type that has none beyond its base URL: any other key is refused.
public struct NoNetworkSettings: AdNetworkSettings, Hashable {
    /// No key.
    public enum Key: CodingKey, CaseIterable {}

    /// No settings.
    public init() {}

    /// Reads nothing (the keys were checked against ``Key``, which has none).
    public init(from decoder: any Decoder) throws {}
}

/// One configured network: its id, its base URL and its type's settings.
public struct NetworkConfiguration<Settings: AdNetworkSettings>: Sendable {
    /// The network's id (its key under `networks`).
    public var id: String
    /// Its `base_url`, an absolute URL.
    public var baseURL: String
    /// Its type's own settings.
    public var settings: Settings

    /// Creates a network configuration.
    public init(id: String, baseURL: String, settings: Settings) {
        self.id = id
        self.baseURL = baseURL
        self.settings = settings
    }

    /// `networks.<id>`, the prefix of every error about this network (`networks.gc.queue_path: …`).
    public var path: String { "networks.\(id)" }
}

/// What a factory builds networks with.
public struct AdNetworkFactoryContext: Sendable {
    /// The HTTP client every network sends through.
    public var http: any HTTPClient
    /// The clock networks read.
    public var clock: any AdClock
    /// A per-user directory where a network may keep durable state (an event queue), or nil when there is none.
    public var stateDirectory: URL?

    /// Creates a context.
    public init(http: any HTTPClient, clock: any AdClock = SystemAdClock(), stateDirectory: URL? = nil) {
        self.http = http
        self.clock = clock
        self.stateDirectory = stateDirectory
    }
}

/// How a configuration file names, reads and builds one kind of network. Each adapter module provides one
/// (`MarsFactory`, `GrowthCatFactory`, …) with its ``Settings`` type; `mediate` keeps a list of them and has no code of
/// its own per network.
public protocol AdNetworkFactory: Sendable {
    /// The network's own settings (a `Decodable` with field-path errors; ``NoNetworkSettings`` when it has none).
    associatedtype Settings: AdNetworkSettings
    /// The `type` in the configuration file (`mars`).
    static var type: String { get }
    /// The formats its networks serve (placements are checked against them before anything is built).
    static var formats: Set<AdFormat.Kind> { get }
    /// The banner sizes its networks serve when they serve only some (a banner placement of another size on one of
    /// its lines is refused before anything is sent); nil, the default, when they serve any size or no banners.
    static var bannerSizes: [BannerSize]? { get }
    /// Builds the network. Throws ``AdError/Code/configuration`` naming the field (`networks.gc.queue_path: …`).
    /// Starts nothing. The result carries the network's background work by its type (``BuiltNetwork``): whoever
    /// builds it ends that work with ``BuiltNetwork/backgroundWork``'s `shutdown()` (`mediate` runs it as a service
    /// of its `ServiceGroup`, beside the HTTP client, and ends it with the group's graceful shutdown).
    static func make(_ network: NetworkConfiguration<Settings>, context: AdNetworkFactoryContext) throws(AdError)
        -> BuiltNetwork
}

extension AdNetworkFactory {
    /// Any size, or no banners: nil.
    public static var bannerSizes: [BannerSize]? { nil }
}

/// A network a factory built, with the background work it owns, known from its type: `BuiltNetwork(network)` of a
/// type that conforms to ``BackgroundWork`` carries it as ``backgroundWork``, of any other type carries none. No cast
/// decides it, so a network type that works in the background and says so is never left running, and one that does
/// not say so cannot be built into a value that claims it.
public struct BuiltNetwork: Sendable {
    /// The network.
    public let network: any AdNetwork
    /// The network's background work (its delivery loop, its notice or callback sender), which its builder ends;
    /// nil for a network that works only while asked.
    public let backgroundWork: (any BackgroundWork)?

    /// A network that works in the background: its ``BackgroundWork`` is carried.
    public init(_ network: some AdNetwork & BackgroundWork) {
        self.network = network
        backgroundWork = network
    }

    /// A network that works only while asked (no background work).
    public init(_ network: some AdNetwork) {
        self.network = network
        backgroundWork = nil
    }
}
