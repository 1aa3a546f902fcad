import AdMediation
import AdStorage
import AdapterKit
import Foundation

/// Builds ``GrowthCatNetwork``s from a configuration file: `api_key` (a secret) is required; `queue_path` is the
/// durable event queue (default: `<id>-<hash>-events.sqlite` in the state directory, so events queued while offline are
/// replayed by the next run); `catalog_cache: false` turns the catalog TTL cache off.
public enum GrowthCatFactory: AdNetworkFactory {
    /// `growthcat`.
    public static let type = "growthcat"
    /// Banners, interstitials and rewarded ads.
    public static let formats: Set<AdFormat.Kind> = [.banner, .interstitial, .rewarded]
    /// A GrowthCat network's settings: `api_key` (required, a secret), `queue_path`, `catalog_cache`.
    public struct Settings: AdNetworkSettings, Hashable {
        /// The API key (`api_key`): a secret, never printed.
        public var apiKey: String
        /// The durable event queue's SQLite file (`queue_path`); default: in the state directory.
        public var queuePath: String?
        /// Whether the catalog TTL cache is on (`catalog_cache`: `true`/`false`, or the strings). Default on.
        public var catalogCache: Bool

        /// Creates settings.
        public init(apiKey: String, queuePath: String? = nil, catalogCache: Bool = true) {
            self.apiKey = apiKey
            self.queuePath = queuePath
            self.catalogCache = catalogCache
        }

        /// The keys: `api_key`, `queue_path`, `catalog_cache`.
        public enum Key: String, CodingKey, CaseIterable {
            /// `api_key`.
            case apiKey = "api_key"
            /// `queue_path`.
            case queuePath = "queue_path"
            /// `catalog_cache`.
            case catalogCache = "catalog_cache"
        }

        /// Decodes the settings (a missing or empty API key: `required for type growthcat`). When the decoder
        /// collects problems (the configuration file's reading), each setting's is recorded, not only the first.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            apiKey = try decoder.collecting("") {
                try c.decodeRequiredSetting(forKey: .apiKey, type: GrowthCatFactory.type)
            }
            queuePath = try decoder.collecting(nil) { try c.decodeSettingText(forKey: .queuePath) }
            catalogCache = try decoder.collecting(true) { try c.decodeFlagSetting(forKey: .catalogCache) ?? true }
        }
    }

    /// A ``GrowthCatNetwork`` over a `GrowthCatClient` with its durable queue.
    public static func make(_ network: NetworkConfiguration<Settings>, context: AdNetworkFactoryContext)
        throws(AdError) -> BuiltNetwork
    {
        let settings = network.settings
        let queuePath: String
        if let configured = settings.queuePath {
            queuePath = configured
        } else {
            queuePath = try defaultQueuePath(
                networkID: network.id, baseURL: network.baseURL, apiKey: settings.apiKey,
                stateDirectory: context.stateDirectory)
        }
        var configuration = GrowthCatClient.Configuration(
            apiKey: settings.apiKey, baseURL: network.baseURL, eventQueuePath: queuePath)
        configuration.catalogCaching = settings.catalogCache
        do {
            return BuiltNetwork(
                GrowthCatNetwork(
                    id: network.id,
                    client: try GrowthCatClient(configuration: configuration, http: context.http, clock: context.clock),
                    clock: context.clock))
        } catch {
            throw AdError(.configuration, "\(network.path).queue_path: \(error.message)")
        }
    }

    /// `<state directory>/<id>-<hash>-events.sqlite`, creating the directory: `<id>` keeps letters, digits, `-` and
    /// `_` (others become `_`) so the file is recognisable, and `<hash>` (16 hex digits of a SHA-256 of the exact
    /// network id, base URL and API key) keeps two networks whose ids differ only in punctuation (`g.a`, `g_a`), or
    /// that point at different endpoints or keys, in queues of their own: one network's events never reach another's
    /// server. A queue left by an earlier version at `<id>-events.sqlite` is adopted when the id needed no
    /// replacement (so that name was this network's alone).
    public static func defaultQueuePath(
        networkID: String, baseURL: String = "", apiKey: String = "", stateDirectory: URL?
    ) throws(AdError) -> String {
        guard let directory = stateDirectory else {
            throw AdError(
                .configuration,
                "networks.\(networkID).queue_path: no state directory (set XDG_STATE_HOME or HOME, or queue_path)")
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw AdError(
                .configuration,
                "networks.\(networkID).queue_path: cannot create \(directory.path): \(error.localizedDescription)")
        }
        let safe = String(
            networkID.unicodeScalars.map {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") ? Character($0) : "_"
            })
        // MediaCache.fileName is the hex SHA-256 of a string.
        let hash = MediaCache.fileName(for: [networkID, baseURL, apiKey].joined(separator: "\u{0}")).prefix(16)
        let path = directory.appendingPathComponent("\(safe)-\(hash)-events.sqlite").path
        let legacy = directory.appendingPathComponent("\(safe)-events.sqlite").path
        let files = FileManager.default
        if safe == networkID, files.fileExists(atPath: legacy), !files.fileExists(atPath: path) {
            for suffix in ["", "-wal", "-shm"] where files.fileExists(atPath: legacy + suffix) {
                try? files.moveItem(atPath: legacy + suffix, toPath: path + suffix)
            }
        }
        return path
    }
}
