import AdMediation
import AdStorage
import AdTransport
import AdapterKit
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// Loading: the catalog or serve request, its cache, the servable ad, the creative pre-download.
extension GrowthCatClient {
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

    /// A step of a load failed for want of a network (or its own request timeout) when the load's deadline had
    /// already passed: the load's answer is then its timeout, not a no fill. A process stalled past the deadline (a
    /// busy machine) can see the transport's failure before its own timer.
    static func timeOutIfPast(_ deadline: AdInstant?, now: AdInstant, _ error: AdError) throws(AdError) {
        guard let deadline, now >= deadline else { return }
        throw AdError(.timeout, "the load's deadline passed: \(error.message)", reason: deadlineReason)
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
            try Self.timeOutIfPast(deadline, now: clock.now, error)
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
            try Self.timeOutIfPast(deadline, now: clock.now, error)
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
