import AdMediation
import AdTransport
import CoreMetrics
import Foundation
import Logging

extension GrowthCatClient {
    /// Settings. The API key is a secret: ``description`` shows only its last four characters.
    public struct Configuration: Sendable, CustomStringConvertible {
        /// `gc_live_…` or `gc_test_…`.
        public var apiKey: String
        /// The API's base URL (`/v1/sdk/config` is appended).
        public var baseURL: String
        /// The SQLite file of the durable event queue.
        public var eventQueuePath: String
        /// Where the client logs (`admediation.growthcat` by default; the backend is the app's `LoggingSystem`).
        public var logger = Logger(label: "admediation.growthcat")
        /// Where the client's metrics go (the app's `MetricsSystem` by default): the gauge
        /// `admediation_growthcat_event_queue_depth`, and the counters `admediation_growthcat_events_dropped_total`
        /// (`reason`: `queue_full`, `refused`) and `admediation_growthcat_events_lost_total` (not stored).
        public var metrics: any MetricsFactory = MetricsSystem.factory
        /// The most disk the event queue may use; an event that does not fit is refused with
        /// ``AdError/Code/storage``. Default 16 MiB (at least 64 KiB).
        public var eventQueueMaxBytes: Int = 16 << 20
        /// Batched events are sent every `batchSize` events… Default 10.
        public var batchSize: Int = 10
        /// …or after this long. Default 30 s.
        public var batchInterval: Duration = .seconds(30)
        /// Retries in a row after a 5xx (the seed: "retry with exponential backoff, at most 3 retries"), for loads,
        /// the bootstrap, reward validation and event delivery. Default 3.
        public var maxServerRetries: Int = 3
        /// First back-off delay; it doubles per failure in a row. Default 1 s.
        public var retryBaseDelay: Duration = .seconds(1)
        /// The longest back-off of event delivery (after 429s or failures in a row). Default 5 minutes.
        public var maxRetryDelay: Duration = .seconds(300)
        /// Event delivery waits its back-off less up to this fraction of it, at random, so that many clients do not
        /// retry in step. Default 0.2; 0 makes delays exact.
        public var retryJitter: Double = 0.2
        /// The longest a reward validation may take, retries included (the user waits on the close screen).
        /// Default 15 s.
        public var rewardValidationTimeout: Duration = .seconds(15)
        /// While offline, probe the server this often. Default 30 s.
        public var offlineProbeInterval: Duration = .seconds(30)
        /// Deadline of each request. Default 10 s.
        public var requestTimeout: Duration = .seconds(10)
        /// Cache catalogs for their TTL. Default true; turn off to measure the network (as `mediate compare` does).
        public var catalogCaching: Bool = true
        /// The rule for the server's asset URLs and the client's requests; nil (the default) derives it from
        /// `baseURL` (``DestinationPolicy/forNetwork(baseURL:explicit:)``: https to public hosts, plus http and
        /// loopback for a local base URL; the base URL's origin always trusted).
        public var destinations: DestinationPolicy? = nil
        /// Directory of the creative media cache, where `loadAd` pre-downloads `prefetch` creatives (the seed: "loadAd
        /// … pre-downloads R2 creative assets to disk"). Default: `<queue file name without extension>-media` beside
        /// the event queue file (``defaultMediaCacheDirectory(eventQueuePath:)``); nil disables media caching.
        public var mediaCacheDirectory: URL? {
            get {
                guard let chosenMediaCacheDirectory else {
                    return Self.defaultMediaCacheDirectory(eventQueuePath: eventQueuePath)
                }
                return chosenMediaCacheDirectory
            }
            set { chosenMediaCacheDirectory = .some(newValue) }
        }
        /// The folder the app set (`.some(nil)`: media caching off); nil: the default, worked out when read, so
        /// that making a configuration at launch does not pay for Foundation's first `URL` (about 0.5 ms cold).
        private var chosenMediaCacheDirectory: URL??
        /// The most disk the media cache may use; past it the least recently used creatives go. Default 50 MiB.
        public var mediaCacheMaxBytes: Int = 50 << 20
        /// The wall clock for media expiry (media outlives the process). Default `Date()`.
        public var now: @Sendable () -> Date = { Date() }

        /// Creates a configuration.
        public init(apiKey: String, baseURL: String, eventQueuePath: String) {
            self.apiKey = apiKey
            self.baseURL = baseURL
            self.eventQueuePath = eventQueuePath
        }

        /// The media cache beside the event queue file: `events.sqlite` → `events-media/` in the same directory; nil
        /// for an empty or in-memory (`:memory:`) queue path.
        public static func defaultMediaCacheDirectory(eventQueuePath: String) -> URL? {
            guard !eventQueuePath.isEmpty, eventQueuePath != ":memory:" else { return nil }
            let queue = URL(fileURLWithPath: eventQueuePath)
            let name = queue.deletingPathExtension().lastPathComponent
            guard !name.isEmpty else { return nil }
            return queue.deletingLastPathComponent().appendingPathComponent(name + "-media", isDirectory: true)
        }

        /// The configuration with the API key redacted (`gc_test_…demo`).
        public var description: String {
            "GrowthCatClient.Configuration(apiKey: \(GrowthCatClient.redact(apiKey)), baseURL: \(baseURL))"
        }
    }

    static func redact(_ key: String) -> String {
        let prefix = key.hasPrefix("gc_live_") ? "gc_live_" : key.hasPrefix("gc_test_") ? "gc_test_" : ""
        return prefix + "…" + String(key.suffix(min(4, max(0, key.count - prefix.count))))
    }
}
