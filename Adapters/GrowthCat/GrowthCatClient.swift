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

    // MARK: Loading

    /// Loads the first servable ad of a placement. Returns nil when ads are disabled, on no fill (404 or an empty
    /// catalog), when no ad's format is allowed, or when the network is unavailable and no valid cache exists.
    /// Throws for hard errors (401, 429, 5xx, unreadable answers).
    /// `timeout` bounds the whole load, retries included: a 5xx is retried (at most `maxServerRetries` times, with
    /// exponential back-off) only while the next attempt can start before it runs out.
    /// `format` is how the app will show the ad: an ad whose `placement` is null is checked against the server's
    /// `formats` allow-list as that format (without it, such an ad is served only when no allow-list applies).
    public func loadAd(
        placementKey: String, format: GrowthCatAdFormat? = nil, appUserID: String? = nil, sessionID: String? = nil,
        privacy: PrivacySignals = PrivacySignals(), timeout: Duration? = nil
    ) async throws(AdError) -> GrowthCatAd? {
        try await load(
            cacheKey: "catalog:\(placementKey)", path: "/v1/ads/catalog",
            query: [("placement_key", placementKey)], appUserID: appUserID, sessionID: sessionID, privacy: privacy,
            requiredFormat: format, deadline: timeout.map { clock.now + $0 })
    }

    /// Loads an ad by format (`/v1/ads/serve?format=`), with the same nil rules.
    public func loadAd(
        format: GrowthCatAdFormat, appUserID: String? = nil, sessionID: String? = nil,
        privacy: PrivacySignals = PrivacySignals(), timeout: Duration? = nil
    ) async throws(AdError) -> GrowthCatAd? {
        try await load(
            cacheKey: "serve:\(format.rawValue)", path: "/v1/ads/serve", query: [("format", format.rawValue)],
            appUserID: appUserID, sessionID: sessionID, privacy: privacy, requiredFormat: format,
            deadline: timeout.map { clock.now + $0 })
    }

    /// Warms the catalog cache (placements whose cache is still valid cost no request) and downloads the creative
    /// of each ad whose `asset_cache.strategy` is `prefetch`. The cache is keyed by the placement and the privacy
    /// signals (they decide what may be served), not by the user or session id, so a later `loadAd` with the same
    /// privacy signals hits what this warmed, whoever the user is.
    public func prefetchAdCatalogs(placementKeys: [String], privacy: PrivacySignals = PrivacySignals()) async {
        for key in placementKeys {
            // loadAd itself downloads a `prefetch` creative before it returns.
            _ = try? await loadAd(placementKey: key, privacy: privacy)
        }
    }

    /// Downloads the ad's creative into the media cache (unless it is already there and unexpired) and returns the
    /// local file. TTL: the creative's `asset_cache.ttl_seconds`, else the catalog's `media_cache_ttl_seconds`.
    /// Returns nil when media caching is off or the creative is not cacheable.
    @discardableResult
    public func cacheCreative(for ad: GrowthCatAd) async throws(AdError) -> URL? {
        try await cacheCreative(for: ad, timeout: configuration.requestTimeout)
    }

    func cacheCreative(for ad: GrowthCatAd, timeout: Duration) async throws(AdError) -> URL? {
        guard ad.assetCacheable, let media = await mediaCache else { return nil }
        let now = Int64(configuration.now().timeIntervalSince1970)
        if let file = await media.file(for: ad.assetURL, now: now) { return file }
        let response: HTTPResponse
        do {
            response = try await http.send(
                HTTPRequest(url: ad.assetURL, timeout: timeout).requiring(destinations, as: .asset))
        } catch let error as HTTPClientError {
            throw AdError(.network, "asset \(ad.creativeID): \(error.code.rawValue)")
        } catch {
            throw AdError(.network, "asset \(ad.creativeID): \(error)")
        }
        guard response.status == 200 else {
            throw AdError(.server(status: response.status), "asset \(ad.creativeID) answered \(response.status)")
        }
        let ttl = Int64(ad.assetTTLSeconds ?? ad.mediaCacheTTLSeconds ?? 604_800)
        do {
            try await media.store(response.body, for: ad.assetURL, expiresAt: now + ttl, now: now)
        } catch {
            throw AdError(.configuration, "the media cache could not store \(ad.creativeID): \(error)")
        }
        return await media.file(for: ad.assetURL, now: now)
    }

    /// The cached creative file of `ad`, if present and unexpired (the app renders it instead of the remote URL).
    public func cachedCreative(for ad: GrowthCatAd) async -> URL? {
        await mediaCache?.file(for: ad.assetURL, now: Int64(configuration.now().timeIntervalSince1970))
    }

    func load(
        cacheKey: String, path: String, query: [(String, String)], appUserID: String?, sessionID: String?,
        privacy: PrivacySignals, requiredFormat: GrowthCatAdFormat? = nil, deadline: AdInstant? = nil
    ) async throws(AdError) -> GrowthCatAd? {
        guard
            let ad = try await loadServable(
                cacheKey: cacheKey, path: path, query: query, appUserID: appUserID, sessionID: sessionID,
                privacy: privacy, requiredFormat: requiredFormat, deadline: deadline)
        else { return nil }
        if ad.isRewarded { handOut(ad.token) }
        return await predownloaded(ad, deadline: deadline)
    }

    /// The seed: "`asset_cache.strategy: prefetch` means the SDK should download the asset before rendering when
    /// possible". So a load downloads such a creative before it returns — within the load's remaining time, and a
    /// failed download does not fail the load (the ad is still servable from its remote URL).
    ///
    /// At most ``maxPrefetches`` loads download at once; past that a load returns its ad at once, without a local
    /// copy. Every download's file writes go through the media cache's one I/O queue, so without the bound each of
    /// 256 concurrent loads waited behind the others' writes and missed its own deadline: an optional download made
    /// the whole source fail (`mediate compare --concurrency 256`: every rewarded request timed out).
    func predownloaded(_ ad: GrowthCatAd, deadline: AdInstant?) async -> GrowthCatAd {
        guard ad.assetStrategy == "prefetch", ad.assetCacheable, await mediaCache != nil else { return ad }
        var timeout = configuration.requestTimeout
        if let deadline {
            let left = deadline - clock.now
            guard left > .zero else { return ad }
            timeout = min(timeout, left)
        }
        guard prefetchesInFlight < Self.maxPrefetches else { return ad }
        prefetchesInFlight += 1
        defer { prefetchesInFlight -= 1 }
        var ad = ad
        ad.localAssetFile = try? await cacheCreative(for: ad, timeout: timeout)
        return ad
    }

    /// The most creative pre-downloads at once (``predownloaded(_:deadline:)``).
    static let maxPrefetches = 4

    func loadServable(
        cacheKey: String, path: String, query: [(String, String)], appUserID: String?, sessionID: String?,
        privacy: PrivacySignals, requiredFormat: GrowthCatAdFormat?, deadline: AdInstant?
    ) async throws(AdError) -> GrowthCatAd? {
        let bootstrap: GrowthCatSDKBootstrap
        do {
            bootstrap = try await ensureBootstrap(deadline: deadline)
        } catch  where error.code == .network || (error.code == .timeout && error.reason != Self.deadlineReason) {
            return nil  // no bootstrap and no network: nothing can be served (the load's own deadline is a timeout)
        }
        guard bootstrap.adsConfig.adsEnabled else { return nil }
        var query = query
        query += WirePrivacy.query(privacy, underAge: .coppa)
        // The cache key: the endpoint, the placement or format, and the privacy signals (which decide what may be
        // served). The user and session ids travel on the wire but do not key the cache, so a prefetch helps them.
        let cacheKey = cacheKey + "?" + query.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        if let cached = catalogCache[cacheKey], cached.expiresAt > clock.now {
            let ad = firstServable(cached.ads, bootstrap: bootstrap, format: requiredFormat)
            // One token, one fill: a catalog whose rewarded ads were handed out already is fetched again.
            if ad != nil || !cached.ads.contains(where: { handedOutRewardTokens.contains($0.token) }) { return ad }
            catalogCache.removeValue(forKey: cacheKey)
        }
        if let appUserID { query.append(("app_user_id", appUserID)) }
        if let sessionID { query.append(("session_id", sessionID)) }
        // After a 429: no request to this endpoint before its back-off passes.
        if let until = rateLimitedUntil[path], clock.now < until {
            let left = until - clock.now
            throw AdError(
                .rateLimited(retryAfter: left),
                "GET \(path) is rate limited for another \(Int(left.milliseconds.rounded(.up))) ms (429 back-off)")
        }
        let response: HTTPResponse
        do {
            // The seed's status table applies to loads too: 5xx is retried with exponential back-off, at most
            // `maxServerRetries` times, and only while the next attempt starts before the load's deadline.
            response = try await requestRetrying(.get, path, query: query, deadline: deadline).response
        } catch  where error.code == .network {
            return nil  // the cache (checked above) has expired and the network is unavailable
        }
        if response.status == 429 {
            // Seed: "429 — back off": for `Retry-After`, or without one (or an unreadable one) for
            // `rateLimitBackoff` doubling with each 429 in a row, at most `maxRetryDelay`.
            rateLimitStreak[path, default: 0] += 1
            let streak = min(rateLimitStreak[path, default: 1], 20)
            let fallback = min(Self.rateLimitBackoff * (1 << (streak - 1)), configuration.maxRetryDelay)
            let after = response.retryAfter.flatMap { $0 > .zero ? $0 : nil } ?? fallback
            rateLimitedUntil[path] = clock.now + after
        } else {
            rateLimitStreak[path] = nil
        }
        if response.status == 404 { return nil }
        guard response.isSuccess else { throw Self.statusError(response, "GET \(path)") }
        let (parsed, ttl) = try Self.parseCatalog(response.body)
        let ads = Self.servable(parsed, under: destinations)
        let effectiveTTL = min(ttl ?? bootstrap.adsConfig.adCacheTTLSeconds, bootstrap.adsConfig.adCacheTTLSeconds)
        if configuration.catalogCaching { storeCatalog(ads, key: cacheKey, until: clock.now + .seconds(effectiveTTL)) }
        return firstServable(ads, bootstrap: bootstrap, format: requiredFormat)
    }

    /// Records that a rewarded ad's one-time token was handed to a load (bounded: past 4 096 the oldest record goes
    /// with its catalogs, which are fetched again).
    func handOut(_ token: String) {
        if handedOutRewardTokens.count >= 4096 {
            handedOutRewardTokens.removeAll()
            catalogCache.removeAll()
        }
        handedOutRewardTokens.insert(token)
    }

    /// The most catalogs kept; past it, expired entries go first, then the one expiring soonest.
    static let catalogCacheLimit = 256

    /// How many catalogs are cached (for the bound's tests).
    var catalogCacheCount: Int { catalogCache.count }

    func storeCatalog(_ ads: [GrowthCatAd], key: String, until: AdInstant) {
        if catalogCache[key] == nil && catalogCache.count >= Self.catalogCacheLimit {
            let now = clock.now
            catalogCache = catalogCache.filter { $0.value.expiresAt > now }
            if catalogCache.count >= Self.catalogCacheLimit,
                let soonest = catalogCache.min(by: { $0.value.expiresAt < $1.value.expiresAt })
            {
                catalogCache.removeValue(forKey: soonest.key)
            }
        }
        catalogCache[key] = (ads, until)
    }

    func firstServable(_ ads: [GrowthCatAd], bootstrap: GrowthCatSDKBootstrap?, format: GrowthCatAdFormat?)
        -> GrowthCatAd?
    {
        ads.first { ad in
            guard ["image", "video", "app_store"].contains(ad.creativeType) else { return false }
            // An App Store install needs what StoreKit needs: an app id and a known presentation (spec: "`store_kit`
            // present, `presentation` is `overlay` or `product_view`").
            if ad.creativeType == "app_store" {
                guard let id = ad.appStoreID, !id.isEmpty,
                    let presentation = ad.storePresentation, ["overlay", "product_view"].contains(presentation)
                else { return false }
            }
            // A token a reward validation spent is never handed out again (the server refuses it a second time), nor
            // a rewarded ad's one-time token already handed to another load.
            if !spentRewardTokens.isEmpty && spentRewardTokens.contains(ad.token) { return false }
            if ad.isRewarded && handedOutRewardTokens.contains(ad.token) { return false }
            // The server's allow-list applies to every ad: one without a placement counts as the requested format,
            // and one whose format is not known at all is not served under an allow-list.
            if let allowed = bootstrap?.adsConfig.formats {
                guard let adFormat = ad.format ?? format, allowed.contains(adFormat) else { return false }
            }
            return true
        }
    }

    /// The limits every GrowthCat answer must respect before it is decoded.
    static let limits = JSONLimits()
}

extension GrowthCatClient: BackgroundWork {}
