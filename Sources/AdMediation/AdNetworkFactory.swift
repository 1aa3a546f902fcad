import Foundation

/// One network's settings from a configuration file (`networks.<id>` of `mediate`'s JSON): its id, type, base URL
/// and every other setting as a string (numbers as written; a nested object's strings under `key.sub`). The
/// helpers throw ``AdError/Code/configuration`` errors that name the field (`networks.cb.app_id: required for type
/// chartboost`).
public struct NetworkSettings: Sendable, Hashable {
    /// The network's id (its key under `networks`).
    public let id: String
    /// Its `type`.
    public let type: String
    /// Its `base_url`, an absolute URL.
    public let baseURL: String
    /// Every other setting, by key.
    public let values: [String: String]

    /// Creates settings.
    public init(id: String, type: String, baseURL: String, values: [String: String] = [:]) {
        self.id = id
        self.type = type
        self.baseURL = baseURL
        self.values = values
    }

    /// `networks.<id>`, the prefix of every error about these settings.
    public var path: String { "networks.\(id)" }

    /// The setting `key`, if present.
    public subscript(key: String) -> String? { values[key] }

    /// The setting `key`; a missing or empty one is an error.
    public func required(_ key: String) throws(AdError) -> String {
        guard let value = values[key], !value.isEmpty else {
            throw AdError(.configuration, "\(path).\(key): required for type \(type)")
        }
        return value
    }

    /// The setting `key` as a whole number in `range`, if present.
    public func wholeNumber(_ key: String, in range: ClosedRange<Int>) throws(AdError) -> Int? {
        guard let text = values[key] else { return nil }
        guard let value = OutsideValue.integer(text, in: range) else {
            throw AdError(
                .configuration,
                "\(path).\(key): must be a whole number \(range.lowerBound)…\(range.upperBound), got "
                    + "\"\(text.prefix(40))\""
            )
        }
        return value
    }

    /// The setting `key` as an absolute URL (with a scheme and a host), if present.
    public func absoluteURL(_ key: String) throws(AdError) -> String? {
        guard let text = values[key] else { return nil }
        guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
            throw AdError(.configuration, "\(path).\(key): required, an absolute URL")
        }
        return text
    }
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

/// How a configuration file names, checks and builds one kind of network. Each adapter module provides one
/// (`MarsFactory`, `GrowthCatFactory`, …); `mediate` keeps a list of them and has no code of its own per network.
public protocol AdNetworkFactory: Sendable {
    /// The `type` in the configuration file (`mars`).
    static var type: String { get }
    /// The formats its networks serve (placements are checked against them before anything is built).
    static var formats: Set<AdFormat.Kind> { get }
    /// The settings it accepts besides `type` and `base_url` (a nested object's as `key.sub`); any other is an error.
    static var settingKeys: Set<String> { get }
    /// Checks the settings when the file is read. Throws ``AdError/Code/configuration`` naming the field.
    static func validate(_ settings: NetworkSettings) throws(AdError)
    /// Builds the network.
    static func make(_ settings: NetworkSettings, context: AdNetworkFactoryContext) throws(AdError) -> any AdNetwork
    /// Ends what a network of this type runs in the background (default: nothing to end).
    static func shutdown(_ network: any AdNetwork) async
}

extension AdNetworkFactory {
    /// Accepts any settings of ``settingKeys``.
    public static func validate(_ settings: NetworkSettings) throws(AdError) {}
    /// Nothing to end.
    public static func shutdown(_ network: any AdNetwork) async {}
}
