import AdMediation
import AdStorage
import AdTransport
import AdapterKit
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// The GrowthCat ads client: bootstrap, catalog and serve loads with a TTL cache, events through a durable
/// offline queue, reward validation, and the seed's status-code rules.
public actor GrowthCatClient {
    let configuration: Configuration
    /// The rule the server's asset URLs must meet, derived once from the base URL
    /// (``DestinationPolicy/forNetwork(baseURL:explicit:)``): https to public hosts for a production base URL (plus
    /// its own origin), http and loopback too for a local one; never a private or link-local address.
    let destinations: DestinationPolicy
    let http: any HTTPClient
    let clock: any AdClock
    /// The durable queue's opening, started by the first use (``queue``); every later use awaits the same one.
    var queueOpening: Task<Result<OpenedQueue, StorageError>, Never>?
    /// The media cache once first used (``mediaCache``); `.some(nil)` when its directory could not be made.
    var openedMediaCache: MediaCache??
    /// The bootstrap, once fetched.
    public private(set) var sdkBootstrap: GrowthCatSDKBootstrap?
    var catalogCache: [String: (ads: [GrowthCatAd], expiresAt: AdInstant)] = [:]
    /// Per endpoint path: no request before this instant (a 429's Retry-After, or the default back-off).
    var rateLimitedUntil: [String: AdInstant] = [:]
    /// Per endpoint path: 429s in a row, for the back-off of a 429 without `Retry-After`.
    var rateLimitStreak: [String: Int] = [:]
    /// The back-off after a load's first 429 without `Retry-After` (doubling per 429 in a row).
    static let rateLimitBackoff: Duration = .seconds(1)
    var batchTimer: Task<Void, Never>?
    var probeTimer: Task<Void, Never>?
    var flushing: Task<FlushReport, Never>?
    var monitorTask: Task<Void, Never>?
    /// The background delivery loop (at most one), and whether another pass was asked for while it ran.
    var deliveryTask: Task<Void, Never>?
    var deliveryWanted = false
    /// Failed flushes in a row, and no delivery attempt of the loop before this instant (the back-off).
    var deliveryFailures = 0
    var deliveryNotBefore: AdInstant?
    /// Rows of batches the server accepted (or refused for good) whose delete failed: never posted again.
    var acceptedUndeleted: Set<Int64> = []
    /// Unreadable rows whose delete failed: skipped.
    var unremovable: Set<Int64> = []
    /// Tokens a reward validation has spent: an ad carrying one is never handed out again.
    var spentRewardTokens: Set<String> = []
    /// One token, one fill: the one-time tokens of rewarded ads already handed to a load. A cached catalog whose
    /// rewarded ads were all handed out is fetched again (fresh allocations), whatever the order of loads, shows and
    /// validations — an ad loaded ahead never carries the token of the ad shown before it.
    var handedOutRewardTokens: Set<String> = []
    /// Creative pre-downloads running now (at most ``maxPrefetches``).
    var prefetchesInFlight = 0
    var isShutDown = false
    /// Events whose append found the queue's file locked by another process (busy/locked past SQLite's busy timeout):
    /// kept in memory, oldest first, at most ``heldEventLimit`` events and ``heldByteLimit`` bytes, until the held
    /// writer stores them.
    var heldEvents: [(id: String, payload: Data)] = []
    var heldBytes = 0
    /// The task writing ``heldEvents`` to the queue once its lock frees (at most one).
    var heldWriter: Task<Void, Never>?
    /// Whether the last request failed for lack of connectivity.
    public internal(set) var isOffline = false
    /// Offline/online transitions (info), events dropped at the queue's cap or refused by the server (warning), events
    /// that could not be stored (error: lost work). Never the API key.
    var logger: Logger { configuration.logger }

    /// Creates the client. Nothing is opened or started here: the durable queue (whose events the next flush
    /// replays) is opened by the first event or flush, and the media cache by the first creative, both off the
    /// calling thread, so constructing a client at launch costs no disk I/O. A queue file that cannot be used
    /// (corrupt, read-only) is then moved aside and a fresh one started (warned once): it degrades this client's
    /// durability only, never the app; a media cache directory that cannot be made turns pre-downloading off (warned).
    /// Throws ``AdError/Code/configuration`` for a blank queue path.
    public init(configuration: Configuration, http: any HTTPClient, clock: any AdClock = SystemAdClock())
        throws(AdError)
    {
        // Checked without Foundation: its first use in a process (CharacterSet) costs ~0.3 ms at launch.
        guard !configuration.eventQueuePath.allSatisfy(\.isWhitespace) else {
            throw AdError(.configuration, "eventQueuePath: must not be blank")
        }
        self.configuration = configuration
        self.http = http
        self.clock = clock
        self.destinations = DestinationPolicy.forNetwork(
            baseURL: configuration.baseURL, explicit: configuration.destinations)
    }

    /// Ends the client, as every component's `shutdown()` does: its background work — the batch timer, the offline
    /// probe, the connectivity monitor, a replay — ends, and it returns when all of it has ended. A flush in progress
    /// gets `shutdownGrace` (1 s, on the client's clock) to finish; then its request in flight is cancelled (a
    /// server that never answers holds shutdown for the grace, not for `requestTimeout`), and the batch's events stay
    /// queued, sent by the next client with the same `sdk_event_id`s. Events held in memory while the queue's file
    /// was locked are written if the lock has freed, else dropped and counted as lost. Queued events stay in the
    /// durable queue for the next client on the same file; afterwards the client makes no request on its own
    /// initiative (calls the app makes still work). Idempotent. Releasing the client cancels the same work.
    public func shutdown() async {
        isShutDown = true
        batchTimer?.cancel()
        batchTimer = nil
        probeTimer?.cancel()
        probeTimer = nil
        monitorTask?.cancel()
        monitorTask = nil
        deliveryTask?.cancel()
        // The grace of a flush in flight runs on the client's clock; then the flush (and its request) is cancelled.
        let inFlight = flushing
        let clock = clock, grace = Self.shutdownGrace
        let cutoff = inFlight.map { flush in
            Task {
                do { try await clock.sleep(for: grace) } catch { return }
                flush.cancel()
            }
        }
        _ = await deliveryTask?.value
        deliveryTask = nil
        _ = await inFlight?.value
        cutoff?.cancel()
        _ = await flushing?.value
        await finishHeldEvents()
    }

    /// How long ``shutdown()`` lets a flush in flight finish before cancelling it: 1 s, on the client's clock —
    /// AsyncHTTPClient's and URLSession's own shutdowns likewise cancel what is in flight rather than wait for it.
    static let shutdownGrace: Duration = .seconds(1)

    /// Runs `body` with a client and shuts it down afterwards, whether `body` returns or throws.
    public static func withClient<T: Sendable>(
        configuration: Configuration, http: any HTTPClient, clock: any AdClock = SystemAdClock(),
        _ body: (GrowthCatClient) async throws -> T
    ) async throws -> T {
        let client = try GrowthCatClient(configuration: configuration, http: http, clock: clock)
        return try await withCleanup {
            try await body(client)
        } finally: {
            await client.shutdown()
        }
    }

    deinit {
        heldWriter?.cancel()
        batchTimer?.cancel()
        probeTimer?.cancel()
        monitorTask?.cancel()
        deliveryTask?.cancel()
    }

    /// Follows a connectivity monitor: the offline queue is replayed whenever connectivity returns.
    public func monitor(_ connectivity: any ConnectivityMonitor) {
        guard !isShutDown else { return }
        monitorTask?.cancel()
        let changes = connectivity.changes
        monitorTask = Task { [weak self] in
            for await online in changes { await self?.connectivityChanged(online) }
        }
    }

    /// The queue's file (tests open it beside the client).
    var queuePathForTests: String { configuration.eventQueuePath }

    /// A new session id.
    public nonisolated func makeSessionID() -> String { RandomID.uuidString() }

    // MARK: Bootstrap

    /// Fetches `GET /v1/sdk/config`. A missing `ads` object means ads are disabled.
    @discardableResult
    public func refreshSDKConfig() async throws(AdError) -> GrowthCatSDKBootstrap {
        try await refreshSDKConfig(deadline: nil)
    }

    /// The bootstrap, a 5xx retried with back-off (the seed's status table) within `deadline`.
    func refreshSDKConfig(deadline: AdInstant?) async throws(AdError) -> GrowthCatSDKBootstrap {
        let response = try await requestRetrying(.get, "/v1/sdk/config", deadline: deadline).response
        guard response.isSuccess else { throw Self.statusError(response, "GET /v1/sdk/config") }
        let bootstrap = try Self.parseBootstrap(response.body)
        sdkBootstrap = bootstrap
        return bootstrap
    }

    func ensureBootstrap(deadline: AdInstant?) async throws(AdError) -> GrowthCatSDKBootstrap {
        if let sdkBootstrap { return sdkBootstrap }
        return try await refreshSDKConfig(deadline: deadline)
    }

}

extension GrowthCatClient: BackgroundWork {}
