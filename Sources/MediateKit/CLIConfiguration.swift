import AdMediation
import AppOpenAds
import ChartboostBanners
import CurlTransport
import Foundation
import GrowthCatAds
import MARSAds
import OpenRTBBidder

/// The CLI's configuration file: named networks and mediated placements (see docs/CONFIG.md). Every network type comes
/// from an adapter's ``AdNetworkFactory`` in ``factories``: this file has no code of its own per network.
package struct CLIConfiguration: Sendable {
    /// The network types `mediate` knows: one line per adapter module.
    package static let factories: [any AdNetworkFactory.Type] = [
        GrowthCatFactory.self,
        MarsFactory.self,
        ChartboostFactory.self,
        AppOpenFactory.self,
        OpenRTBFactory.self,
    ]

    /// The formats networks of `type` serve (none for an unknown type).
    package static func formats(of type: String, in factories: [any AdNetworkFactory.Type] = factories) -> Set<
        AdFormat.Kind
    > {
        guard let factory = factory(type, in: factories) else { return [] }
        return factory.formats
    }

    /// The factory of `type` in `factories`.
    package static func factory(_ type: String, in factories: [any AdNetworkFactory.Type] = factories) -> (
        any AdNetworkFactory.Type
    )? {
        factories.first { $0.type == type }
    }

    /// The configured networks' settings, by id.
    package var networks: [String: NetworkSettings]
    package var mediation: MediationConfiguration
    /// The factories this file was read with.
    package var factories: [any AdNetworkFactory.Type]

    package init(
        networks: [String: NetworkSettings], mediation: MediationConfiguration,
        factories: [any AdNetworkFactory.Type] = Self.factories
    ) {
        self.networks = networks
        self.mediation = mediation
        self.factories = factories
    }

    /// The largest configuration file read (1 MiB), as `parse` bounds it.
    package static let maxFileBytes = 1 << 20

    /// Reads the file at `path`, at most ``maxFileBytes`` + 1 bytes: a larger file (or an endless one such as
    /// `/dev/zero`) is refused after that many bytes, never read into memory whole (issue 31 item 8).
    package static func read(path: String) throws(AdError) -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw AdError(.configuration, "--config: cannot read \(path)")
        }
        defer { try? handle.close() }
        var data = Data()
        do {
            // read(upToCount:) may return less than asked before the end of the file: loop until EOF or the cap.
            while data.count <= maxFileBytes {
                guard let chunk = try handle.read(upToCount: maxFileBytes + 1 - data.count), !chunk.isEmpty else {
                    break
                }
                data.append(chunk)
            }
        } catch {
            throw AdError(.configuration, "--config: cannot read \(path): \(error.localizedDescription)")
        }
        guard data.count <= maxFileBytes else {
            throw AdError(.configuration, "--config: \(path) is larger than the limit of \(maxFileBytes) bytes")
        }
        return data
    }

    /// Reads and checks a configuration file: bounded JSON, each network's type, base URL and settings (checked by its
    /// factory), then the placements against the networks' formats. Errors name the field.
    package static func parse(_ data: Data, factories: [any AdNetworkFactory.Type] = factories) throws(AdError)
        -> CLIConfiguration
    {
        if let violation = JSONLimits(maxBytes: maxFileBytes, maxDepth: 16, maxStringBytes: 16 << 10, maxItems: 1000)
            .violation(in: data)
        {
            throw AdError(.configuration, "configuration: \(violation)")
        }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw AdError(.configuration, "configuration: not a JSON object")
        }
        guard let networksObject = root["networks"] as? [String: Any], !networksObject.isEmpty else {
            throw AdError(.configuration, "networks: required, an object of named networks")
        }
        // A closure, not `\.type`: a key path to a static member through an existential metatype crashes this compiler.
        let types = factories.map { $0.type }.joined(separator: ", ")
        var networks: [String: NetworkSettings] = [:]
        for (id, value) in networksObject.sorted(by: { $0.key < $1.key }) {
            let path = "networks.\(id)"
            guard let object = value as? [String: Any] else {
                throw AdError(.configuration, "\(path): expected an object")
            }
            guard let type = object["type"] as? String else {
                throw AdError(.configuration, "\(path).type: required (one of \(types))")
            }
            guard let networkFactory = Self.factory(type, in: factories) else {
                throw AdError(.configuration, "\(path).type: unknown type \"\(type.prefix(40))\" (one of \(types))")
            }
            let unknownKey = "unknown key for type \(type)"
            let allowed = ["type", "base_url"] + networkFactory.settingKeys.map { String($0.prefix { $0 != "." }) }
            for key in object.keys.sorted() where !allowed.contains(key) {
                let message = ConfigurationKeys.unknownKey(key, valid: allowed, what: unknownKey)
                throw AdError(.configuration, "\(path).\(key): \(message)")
            }
            guard let base = object["base_url"] as? String, let url = URL(string: base), url.scheme != nil,
                url.host != nil
            else {
                throw AdError(.configuration, "\(path).base_url: required, an absolute URL")
            }
            var values: [String: String] = [:]
            for (key, setting) in object where key != "type" && key != "base_url" {
                if let nested = setting as? [String: Any] {
                    // A nested object of strings, such as MARS's {"ohttp": {"relay": …, "config": …}}: `ohttp.relay`, …
                    let subKeys = networkFactory.settingKeys.filter { $0.hasPrefix(key + ".") }
                        .map { String($0.dropFirst(key.count + 1)) }
                    for sub in nested.keys.sorted() where !subKeys.contains(sub) {
                        let message = ConfigurationKeys.unknownKey(sub, valid: subKeys)
                        throw AdError(.configuration, "\(path).\(key).\(sub): \(message)")
                    }
                    for (sub, inner) in nested {
                        guard let text = inner as? String else {
                            throw AdError(.configuration, "\(path).\(key).\(sub): expected a string")
                        }
                        values["\(key).\(sub)"] = text
                    }
                    continue
                }
                switch setting {
                case let s as String: values[key] = s
                case let n as NSNumber where OutsideValue.bool(n) == nil: values[key] = n.stringValue
                default: throw AdError(.configuration, "\(path).\(key): expected a string or a number")
                }
            }
            let settings = NetworkSettings(id: id, type: type, baseURL: base, values: values)
            try networkFactory.validate(settings)
            networks[id] = settings
        }
        var mediationRoot = root
        mediationRoot.removeValue(forKey: "networks")
        let mediationData = (try? JSONSerialization.data(withJSONObject: mediationRoot)) ?? Data()
        let mediation = try MediationConfiguration.decode(json: mediationData)
        var formats: [String: Set<AdFormat.Kind>] = [:]
        for (id, settings) in networks { formats[id] = Self.formats(of: settings.type, in: factories) }
        try mediation.validate(networks: formats)
        return CLIConfiguration(networks: networks, mediation: mediation, factories: factories)
    }

    /// The per-user state directory of `mediate`: `$XDG_STATE_HOME/mediate`, else `~/.local/state/mediate`.
    package static func stateDirectory(environment: [String: String]) -> URL? {
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("mediate")
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".local/state/mediate")
    }

    /// The default event queue of a GrowthCat network: `<state directory>/<network id>-<hash>-events.sqlite`
    /// (created; the hash is of the exact id, base URL and API key).
    package static func defaultQueuePath(
        networkID: String, baseURL: String = "", apiKey: String = "", environment: [String: String]
    ) throws(AdError) -> String {
        try GrowthCatFactory.defaultQueuePath(
            networkID: networkID, baseURL: baseURL, apiKey: apiKey,
            stateDirectory: stateDirectory(environment: environment))
    }

    /// Ends what the networks run in the background (a bidder's notice sender sends what is queued first).
    package func shutdown(_ built: [String: any AdNetwork]) async {
        for (id, network) in built {
            guard let type = networks[id]?.type, let factory = Self.factory(type, in: factories) else { continue }
            await factory.shutdown(network)
        }
    }

    /// Builds every configured network with its factory.
    package func makeNetworks(
        http: any HTTPClient,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        clock: any AdClock = SystemAdClock()
    ) throws(AdError) -> [String: any AdNetwork] {
        let context = AdNetworkFactoryContext(
            http: http, clock: clock, stateDirectory: Self.stateDirectory(environment: environment))
        var built: [String: any AdNetwork] = [:]
        for (id, settings) in networks {
            guard let factory = Self.factory(settings.type, in: factories) else {
                throw AdError(.unsupported, "networks.\(id).type: unknown adapter \(settings.type)")
            }
            built[id] = try factory.make(settings, context: context)
        }
        return built
    }
}
