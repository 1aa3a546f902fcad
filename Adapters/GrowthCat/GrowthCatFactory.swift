import AdMediation
import Foundation

/// Builds ``GrowthCatNetwork``s from a configuration file: `api_key` (a secret) is required; `queue_path` is the
/// durable event queue (default: `<id>-events.sqlite` in the state directory, so events queued while offline are
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
            queuePath = try defaultQueuePath(networkID: settings.id, stateDirectory: context.stateDirectory)
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

    /// `<state directory>/<id>-events.sqlite` (the id with characters other than letters, digits, `-` and `_` replaced
    /// by `_`), creating the directory.
    public static func defaultQueuePath(networkID: String, stateDirectory: URL?) throws(AdError) -> String {
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
                CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" ? Character($0) : "_"
            })
        return directory.appendingPathComponent("\(safe)-events.sqlite").path
    }
}
