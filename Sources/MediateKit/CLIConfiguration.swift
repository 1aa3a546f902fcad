import AdMediation
import AppOpenAds
import ChartboostBanners
import GrowthCatAds
import CurlTransport
import Foundation
import MARSAds
import OpenRTBBidder

/// The CLI's configuration file: named networks and mediated placements (see docs/CONFIG.md).
package struct CLIConfiguration: Sendable {
    /// One named network of the file.
    package struct Network: Sendable {
        package var id: String
        package var type: String
        package var baseURL: String
        package var settings: [String: String]
    }

    package var networks: [String: Network]
    package var mediation: MediationConfiguration

    package init(networks: [String: Network], mediation: MediationConfiguration) {
        self.networks = networks
        self.mediation = mediation
    }

    package static let types = ["growthcat", "mars", "chartboost", "appopen", "openrtb"]
    package static let secretKeys: Set<String> = ["api_key", "app_signature"]

    /// Parses and validates the file; errors name the JSON path and never contain secret values.
    package static func parse(_ data: Data) throws(AdError) -> CLIConfiguration {
        if let violation = JSONLimits(maxBytes: 1 << 20, maxDepth: 16, maxStringBytes: 16 << 10, maxItems: 1000).violation(in: data) {
            throw AdError(.configuration, "configuration: \(violation)")
        }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw AdError(.configuration, "configuration: not a JSON object")
        }
        guard let networksObject = root["networks"] as? [String: Any], !networksObject.isEmpty else {
            throw AdError(.configuration, "networks: required, an object of named networks")
        }
        var networks: [String: Network] = [:]
        for (id, value) in networksObject.sorted(by: { $0.key < $1.key }) {
            let path = "networks.\(id)"
            guard let object = value as? [String: Any] else { throw AdError(.configuration, "\(path): expected an object") }
            guard let type = object["type"] as? String else { throw AdError(.configuration, "\(path).type: required (one of \(types.joined(separator: ", ")))") }
            guard types.contains(type) else { throw AdError(.configuration, "\(path).type: unknown type \"\(type)\" (one of \(types.joined(separator: ", ")))") }
            guard let base = object["base_url"] as? String, let url = URL(string: base), url.scheme != nil, url.host != nil else {
                throw AdError(.configuration, "\(path).base_url: required, an absolute URL")
            }
            var settings: [String: String] = [:]
            for (key, setting) in object where key != "type" && key != "base_url" {
                if key == "ohttp" {
                    // MARS over Oblivious HTTP: {"relay": URL, "config": URL} (the gateway's key configuration).
                    guard type == "mars" else { throw AdError(.configuration, "\(path).ohttp: only a mars network can use OHTTP") }
                    guard let ohttp = setting as? [String: Any] else { throw AdError(.configuration, "\(path).ohttp: expected an object {\"relay\", \"config\"}") }
                    for part in ["relay", "config"] {
                        guard let text = ohttp[part] as? String, let url = URL(string: text), url.scheme != nil, url.host != nil else {
                            throw AdError(.configuration, "\(path).ohttp.\(part): required, an absolute URL")
                        }
                        settings["ohttp.\(part)"] = text
                    }
                    if let extra = ohttp.keys.first(where: { $0 != "relay" && $0 != "config" }) {
                        throw AdError(.configuration, "\(path).ohttp.\(extra): unknown field (relay, config)")
                    }
                    continue
                }
                switch setting {
                case let s as String: settings[key] = s
                case let n as NSNumber where OutsideValue.bool(n) == nil: settings[key] = n.stringValue
                default: throw AdError(.configuration, "\(path).\(key): expected a string or a number")
                }
            }
            let required: [String] = switch type {
            case "growthcat": ["api_key"]
            case "chartboost": ["app_id", "app_signature"]
            default: []
            }
            for key in required where (settings[key] ?? "").isEmpty {
                throw AdError(.configuration, "\(path).\(key): required for type \(type)")
            }
            networks[id] = Network(id: id, type: type, baseURL: base, settings: settings)
        }
        var mediationRoot = root
        mediationRoot.removeValue(forKey: "networks")
        let mediationData = (try? JSONSerialization.data(withJSONObject: mediationRoot)) ?? Data()
        let mediation = try MediationConfiguration.decode(json: mediationData)
        let formats = networks.mapValues { Set(Self.formats(of: $0.type)) }
        try mediation.validate(networks: formats)
        return CLIConfiguration(networks: networks, mediation: mediation)
    }

    package static func formats(of type: String) -> [String] {
        switch type {
        case "growthcat": ["banner", "interstitial", "rewarded"]
        case "mars": ["tile", "spoc", "image"]
        case "chartboost": ["banner"]
        case "appopen": ["app_open"]
        case "openrtb": ["banner", "interstitial", "rewarded"]
        default: []
        }
    }

    /// The per-user state directory of `mediate`: `$XDG_STATE_HOME/mediate`, else `~/.local/state/mediate`.
    package static func stateDirectory(environment: [String: String]) -> URL? {
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("mediate")
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".local/state/mediate")
    }

    /// The default event queue of a GrowthCat network: `<state directory>/<network id>-events.sqlite` (created).
    package static func defaultQueuePath(networkID: String, environment: [String: String]) throws(AdError) -> String {
        guard let directory = stateDirectory(environment: environment) else {
            throw AdError(.configuration, "networks.\(networkID).queue_path: no state directory (set XDG_STATE_HOME or HOME, or queue_path)")
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw AdError(.configuration, "networks.\(networkID).queue_path: cannot create \(directory.path): \(error.localizedDescription)")
        }
        let safe = String(networkID.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" ? Character($0) : "_" })
        return directory.appendingPathComponent("\(safe)-events.sqlite").path
    }

    /// An optional whole-number setting within `range`, or a configuration error naming the field and the range.
    static func unsigned(_ settings: [String: String], _ key: String, range: ClosedRange<Int>, path: String) throws(AdError) -> UInt64? {
        guard let text = settings[key] else { return nil }
        guard let value = OutsideValue.integer(text, in: range) else {
            throw AdError(.configuration, "\(path).\(key): must be a whole number \(range.lowerBound)…\(range.upperBound), got \"\(text.prefix(40))\"")
        }
        return UInt64(value)
    }

    /// The adapters, built over one shared HTTP client.
    /// `environment` decides the state directory (`XDG_STATE_HOME`, `HOME`); tests pass their own.
    /// Ends what the networks run in the background (a bidder's notice sender sends what is queued first).
    package static func shutdown(_ networks: [String: any AdNetwork]) async {
        for network in networks.values {
            if let bidder = network as? BiddingNetwork { await bidder.shutdown() }
        }
    }

    package func makeNetworks(http: any HTTPClient,
                              environment: [String: String] = ProcessInfo.processInfo.environment,
                              clock: any AdClock = SystemAdClock()) throws(AdError) -> [String: any AdNetwork] {
        var built: [String: any AdNetwork] = [:]
        for (id, network) in networks {
            switch network.type {
            case "mars":
                var builder = MozAdsClientBuilder(httpClient: http).environment(.custom(baseURL: network.baseURL))
                if let path = network.settings["cache_path"] {
                    builder = builder.cacheConfig(MozAdsCacheConfig(
                        dbPath: path,
                        defaultCacheTtlSeconds: try Self.unsigned(network.settings, "cache_ttl_s", range: 1...604_800, path: "networks.\(id)"),
                        maxSizeMib: try Self.unsigned(network.settings, "cache_max_mib", range: 1...100, path: "networks.\(id)")))
                }
                let ohttp = network.settings["ohttp.relay"].flatMap { relay in network.settings["ohttp.config"].map { (relay, $0) } }
                if let (relay, config) = ohttp { builder = builder.ohttp(relayURL: relay, keyConfigurationURL: config) }
                built[id] = MarsNetwork(id: id, client: builder.build(), ohttp: ohttp != nil)
            case "chartboost":
                var configuration = ChartboostNetwork.Configuration(
                    baseURL: network.baseURL, appID: network.settings["app_id"] ?? "", appSignature: network.settings["app_signature"] ?? "")
                configuration.id = id
                built[id] = ChartboostNetwork(configuration: configuration, http: http)
            case "appopen":
                var configuration = AppOpenNetwork.Configuration(baseURL: network.baseURL)
                configuration.id = id
                built[id] = AppOpenNetwork(configuration: configuration, http: http)
            case "openrtb":
                var configuration = BiddingNetwork.Configuration(baseURL: network.baseURL)
                configuration.id = id
                if let bundle = network.settings["app_bundle"] { configuration.appBundle = bundle }
                configuration.appID = network.settings["app_id"]
                built[id] = BiddingNetwork(configuration: configuration, http: http, clock: clock)
            case "growthcat":
                // Durable by default: events queued while offline are replayed by the next run.
                let queuePath: String
                if let configured = network.settings["queue_path"] {
                    queuePath = configured
                } else {
                    queuePath = try Self.defaultQueuePath(networkID: id, environment: environment)
                }
                var configuration = GrowthCatClient.Configuration(apiKey: network.settings["api_key"] ?? "", baseURL: network.baseURL, eventQueuePath: queuePath)
                configuration.catalogCaching = network.settings["catalog_cache"] != "false"
                do {
                    built[id] = GrowthCatNetwork(id: id, client: try GrowthCatClient(configuration: configuration, http: http))
                } catch {
                    throw AdError(.configuration, "networks.\(id).queue_path: \(error.message)")
                }
            default:
                throw AdError(.unsupported, "networks.\(id).type: unknown adapter \(network.type)")
            }
        }
        return built
    }
}
