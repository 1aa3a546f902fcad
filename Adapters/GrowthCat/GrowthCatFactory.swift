import AdMediation
import AdStorage
import Foundation

/// Builds ``GrowthCatNetwork``s from a configuration file: `api_key` (a secret) is required; `queue_path` is the
/// durable event queue (default: `<id>-<hash>-events.sqlite` in the state directory, so events queued while offline are
/// replayed by the next run); `catalog_cache: "false"` turns the catalog TTL cache off.
public enum GrowthCatFactory: AdNetworkFactory {
    /// `growthcat`.
    public static let type = "growthcat"
    /// Banners, interstitials and rewarded ads.
    public static let formats: Set<AdFormat.Kind> = [.banner, .interstitial, .rewarded]
    /// `api_key`, `queue_path`, `catalog_cache`.
    public static let settingKeys: Set<String> = ["api_key", "queue_path", "catalog_cache"]

    /// The API key is present.
    public static func validate(_ settings: NetworkSettings) throws(AdError) {
        _ = try settings.required("api_key")
    }

    /// A ``GrowthCatNetwork`` over a `GrowthCatClient` with its durable queue.
    public static func make(_ settings: NetworkSettings, context: AdNetworkFactoryContext) throws(AdError)
        -> any AdNetwork
    {
        let queuePath: String
        if let configured = settings["queue_path"] {
            queuePath = configured
        } else {
            queuePath = try defaultQueuePath(
                networkID: settings.id, baseURL: settings.baseURL, apiKey: try settings.required("api_key"),
                stateDirectory: context.stateDirectory)
        }
        var configuration = GrowthCatClient.Configuration(
            apiKey: try settings.required("api_key"), baseURL: settings.baseURL, eventQueuePath: queuePath)
        configuration.catalogCaching = settings["catalog_cache"] != "false"
        do {
            return GrowthCatNetwork(
                id: settings.id,
                client: try GrowthCatClient(configuration: configuration, http: context.http, clock: context.clock),
                clock: context.clock)
        } catch {
            throw AdError(.configuration, "\(settings.path).queue_path: \(error.message)")
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
