import AdMediation
import AdStorage
import AdapterSupport
import Crypto
import Foundation
import ObliviousHTTP

/// The MARS client: tile, spoc and image requests, callbacks, and the SQLite HTTP cache. Calls are serialised
/// (an actor), as upstream serialises them behind one mutex.
public actor MozAdsClient {
    let environment: MozAdsEnvironment
    let cache: MarsHTTPCache?
    var telemetry: any MozAdsTelemetry
    let contextIDProvider: any MozAdsContextIDProvider
    let http: any HTTPClient
    /// The OHTTP channel, when configured (requests and callbacks with `ohttp: true` go through it).
    let ohttpHTTP: (any HTTPClient)?
    let now: @Sendable () -> Date
    var isShutDown = false
    /// Parsed answers of rows that are in the SQLite cache, so a hit skips SQLite and JSON. Kept coherent with the
    /// store: same expiry, emptied when a trim evicts rows or the cache is cleared. Bounded.
    var parsedHits: [String: (ads: [String: [DecodedAd]], expiresAt: Int64)] = [:]
    /// The wall-clock second of the last expired-row cleanup. Expiry has one-second resolution, so a second cleanup
    /// within the same second cannot delete anything more.
    var lastCleanupSecond: Int64?
    /// Requests in flight by cache key, with the identical requests waiting for their answer.
    var inFlight: [String: [CheckedContinuation<Result<(HTTPResponse, Int64?), AdError>, Never>]] =
        [:]

    init(
        environment: MozAdsEnvironment, cache: MarsHTTPCache?, telemetry: any MozAdsTelemetry,
        contextID: any MozAdsContextIDProvider, http: any HTTPClient, ohttp: (any HTTPClient)? = nil,
        now: @escaping @Sendable () -> Date
    ) {
        self.environment = environment
        self.cache = cache
        self.telemetry = telemetry
        self.contextIDProvider = contextID
        self.http = http
        self.ohttpHTTP = ohttp
        self.now = now
    }

    /// Whether the SQLite cache is enabled.
    public nonisolated var isCacheEnabled: Bool { cache?.isUsable ?? false }

    // MARK: Requests

    /// One tile per placement; placements without fill are absent.
    public func requestTileAds(_ placements: [MozAdsPlacementRequest], options: MozAdsRequestOptions? = nil)
        async throws(AdError) -> [String: MozAdsTile]
    {
        let specs = placements.map { PlacementSpec(id: $0.placementId, count: 1, content: $0.iabContent) }
        let ads = try await fetch(specs, kind: .tile, options: options ?? .init(), timeout: nil)
        return ads.compactMapValues { $0.first.flatMap(Self.tile) }
    }

    /// One image per placement; placements without fill are absent.
    public func requestImageAds(_ placements: [MozAdsPlacementRequest], options: MozAdsRequestOptions? = nil)
        async throws(AdError) -> [String: MozAdsImage]
    {
        let specs = placements.map { PlacementSpec(id: $0.placementId, count: 1, content: $0.iabContent) }
        let ads = try await fetch(specs, kind: .image, options: options ?? .init(), timeout: nil)
        return ads.compactMapValues { $0.first.flatMap(Self.image) }
    }

    /// Spocs per placement, in server order; placements without fill are absent.
    public func requestSpocAds(_ placements: [MozAdsPlacementRequestWithCount], options: MozAdsRequestOptions? = nil)
        async throws(AdError) -> [String: [MozAdsSpoc]]
    {
        let specs = placements.map { PlacementSpec(id: $0.placementId, count: Int($0.count), content: $0.iabContent) }
        let ads = try await fetch(specs, kind: .spoc, options: options ?? .init(), timeout: nil)
        return ads.compactMapValues { items in
            let spocs = items.compactMap(Self.spoc)
            return spocs.isEmpty ? nil : spocs
        }
    }

    /// One tile per placement, keyed by `placementId`; placements without fill are absent. The seed's spelling of
    /// ``requestTileAds(_:options:)``.
    public func requestTileAds(mozAdRequests: [MozAdsPlacementRequest], options: MozAdsRequestOptions? = nil)
        async throws(AdError) -> [String: MozAdsTile]
    {
        try await requestTileAds(mozAdRequests, options: options)
    }

    /// One image per placement, keyed by `placementId`; placements without fill are absent. The seed's spelling of
    /// ``requestImageAds(_:options:)``.
    public func requestImageAds(mozAdRequests: [MozAdsPlacementRequest], options: MozAdsRequestOptions? = nil)
        async throws(AdError) -> [String: MozAdsImage]
    {
        try await requestImageAds(mozAdRequests, options: options)
    }

    /// Spocs per placement (each with its own count), in server order; placements without fill are absent. The seed's
    /// spelling of ``requestSpocAds(_:options:)``.
    public func requestSpocAds(
        mozAdRequests: [MozAdsPlacementRequestWithCount], options: MozAdsRequestOptions? = nil
    ) async throws(AdError) -> [String: [MozAdsSpoc]] {
        try await requestSpocAds(mozAdRequests, options: options)
    }

    struct PlacementSpec: Sendable, Hashable {
        var id: String
        var count: Int
        var content: MozAdsIABContent?
    }

    /// The kind of item a request asks for; each item is decoded as this kind on its own.
    package enum Kind: String, Sendable, CaseIterable { case tile, image, spoc }

    /// Validated, decoded and enriched ads of `kind` per placement: an item that is not a valid `kind` is dropped
    /// (telemetry `invalid_ad_item`), the others stay; `position` counts valid items only.
    func fetch(
        _ placements: [PlacementSpec], kind: Kind, options: MozAdsRequestOptions, timeout: Duration?,
        gpp: String? = nil
    ) async throws(AdError) -> [String: [DecodedAd]] {
        do {
            let (decoded, hash) = try await fetchUnrecorded(placements, options: options, timeout: timeout, gpp: gpp)
            telemetry.recordClientOperationTotal(label: "request_ads")
            let telemetry = telemetry
            return Self.select(decoded, kind: kind, hash: hash, destinations: destinations) {
                telemetry.recordDeserializationError(label: $0, value: $1)
            }
        } catch {
            telemetry.recordClientError(label: "request_ads", value: error.description)
            throw error
        }
    }

    func fetchUnrecorded(
        _ placements: [PlacementSpec], options: MozAdsRequestOptions, timeout: Duration?,
        gpp: String?
    ) async throws(AdError) -> (ads: [String: [DecodedAd]], hash: String) {
        if placements.isEmpty {
            throw AdError.mars(
                code: .buildRequest, message: "Could not build request with empty placement configs")
        }
        var seen: Set<String> = []
        for placement in placements where !seen.insert(placement.id).inserted {
            throw AdError.mars(
                code: .buildRequest,
                message: "Duplicate placement_id found: \(placement.id). Placement_ids must be unique.")
        }
        if options.ohttp, ohttpHTTP == nil {
            throw AdError.mars(
                code: .ohttpNotConfigured,
                message:
                    "ohttp: true needs an OHTTP relay (MozAdsClientBuilder.ohttp(relayURL:keyConfigurationURL:)); "
                    + "nothing was sent"
            )
        }
        let contextID = await contextIDProvider.contextID()
        let hash = Self.requestHash(
            environment: environment, placements: placements, flags: options.flags, ohttp: options.ohttp, gpp: gpp)
        let nowSeconds = Int64(now().timeIntervalSince1970)
        if cache != nil {
            await cleanupIfDue(now: nowSeconds)
            if readsCache(options.cachePolicy), let parsed = parsedHits[hash], parsed.expiresAt > nowSeconds {
                telemetry.recordHttpCacheOutcome(label: "hit", value: "")
                return (parsed.ads, hash)
            }
        }
        let body = Self.requestBody(contextID: contextID, placements: placements, flags: options.flags, gpp: gpp)
        let (response, cachedUntil) = try await sendOnce(
            body: body, hash: hash, options: options, timeout: timeout, now: nowSeconds)
        let ads = try parse(response, placements: placements, hash: hash)
        if let cachedUntil {
            if parsedHits.count >= 128 { parsedHits.removeAll() }
            parsedHits[hash] = (ads, cachedUntil)
        }
        return (ads, hash)
    }

    /// Whether a request may be answered from the cache: there is one, the mode is `cacheFirst`, and the request's TTL
    /// is not 0 (the seed: "`0` disables caching for this request" — no read here, and the effective TTL of 0 means
    /// no write either). Upstream still reads for a TTL of 0 (specs/mars.md §4); the seed is the contract.
    func readsCache(_ policy: MozAdsRequestCachePolicy?) -> Bool {
        cache != nil && (policy?.mode ?? .cacheFirst) == .cacheFirst && policy?.ttlSeconds != 0
    }

    /// Single flight per cache key: while a request that reads the cache (``readsCache(_:)``) is in flight, an
    /// identical one waits for its answer instead of sending a second request that would miss the cache too.
    func sendOnce(
        body: Data, hash: String, options: MozAdsRequestOptions, timeout: Duration?,
        now: Int64
    ) async throws(AdError) -> (HTTPResponse, Int64?) {
        guard readsCache(options.cachePolicy) else {
            return try await send(
                body: body, hash: hash, policy: options.cachePolicy, ohttp: options.ohttp, timeout: timeout, now: now)
        }
        if inFlight[hash] != nil {
            let shared = await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<(HTTPResponse, Int64?), AdError>, Never>) in
                inFlight[hash, default: []].append(continuation)
            }
            return try shared.get()
        }
        inFlight[hash] = []
        let result: Result<(HTTPResponse, Int64?), AdError>
        do {
            result = .success(
                try await send(
                    body: body, hash: hash, policy: options.cachePolicy, ohttp: options.ohttp, timeout: timeout,
                    now: now))
        } catch {
            result = .failure(error)
        }
        for waiter in inFlight.removeValue(forKey: hash) ?? [] { waiter.resume(returning: result) }
        return try result.get()
    }

    func cleanupIfDue(now: Int64) async {
        guard let cache, lastCleanupSecond != now else { return }
        lastCleanupSecond = now
        parsedHits = parsedHits.filter { $0.value.expiresAt > now }
        do {
            try await cache.cleanup(now: now)
        } catch {
            telemetry.recordHttpCacheOutcome(label: "cleanup_failed", value: error.description)
        }
    }

    /// The JSON body, keys sorted as serde writes them (`context_id`, `flags` when not empty, `placements`).
    static func requestBody(contextID: String, placements: [PlacementSpec], flags: [String: Bool], gpp: String? = nil)
        -> Data
    {
        var object: [String: Any] = [
            "context_id": contextID,
            "placements": placements.map { p -> [String: Any] in
                [
                    "placement": p.id,
                    "count": p.count,
                    "content": p.content.map {
                        ["taxonomy": $0.taxonomy.rawValue, "categories": $0.categoryIds] as [String: Any]
                    } ?? NSNull(),
                ]
            },
        ]
        if !flags.isEmpty { object["flags"] = flags }
        if let gpp { object["consent"] = ["gpp": gpp] }
        return JSONWriter.data(object) ?? Data()
    }

    /// The client a request goes through: direct, or — for `ohttp: true` — the OHTTP relay, after the preflight
    /// (`GET {base}ads-preflight`, sent directly) whose `geo_location` and `normalized_ua` travel inside the
    /// encapsulated request as `X-Geo-Location` (always) and `X-User-Agent` (when not empty).
    func channel(ohttp: Bool, headers: inout HTTPHeaders) async throws(AdError) -> any HTTPClient {
        guard ohttp else { return http }
        guard let relay = ohttpHTTP else {
            throw AdError.mars(
                code: .ohttpNotConfigured,
                message:
                    "ohttp: true needs an OHTTP relay (MozAdsClientBuilder.ohttp(relayURL:keyConfigurationURL:)); "
                    + "nothing was sent"
            )
        }
        let preflight = try await preflightResponse()
        if let error = Self.statusError(preflight) {
            throw AdError(error.code, "OHTTP preflight failed: \(error.message)", reason: error.reason)
        }
        struct Preflight: Decodable {
            var geo_location: String?
            var normalized_ua: String?
        }
        let decoded = (try? JSONDecoder().decode(Preflight.self, from: preflight.body.prefix(64 << 10))) ?? Preflight()
        headers.add(name: "X-Geo-Location", value: String((decoded.geo_location ?? "").prefix(256)))
        if let ua = decoded.normalized_ua, !ua.isEmpty {
            headers.add(name: "X-User-Agent", value: String(ua.prefix(512)))
        }
        return relay
    }

    /// The preflight answer: sent directly, through the HTTP cache when there is one (cache first, keyed by its URL
    /// alone, TTL from `max-age` or the cache's default; specs/mars.md §5).
    func preflightResponse() async throws(AdError) -> HTTPResponse {
        let url = environment.url("ads-preflight")
        let hash = Self.preflightHash(url)
        let nowSeconds = Int64(now().timeIntervalSince1970)
        if let cache, case .success(let cached?) = await cache.lookup(hash: hash), cached.expiresAt > nowSeconds {
            var headers = HTTPHeaders()
            for (name, value) in cached.headers { headers.add(name: name, value: value) }
            return HTTPResponse(status: cached.status, headers: headers, body: cached.body)
        }
        let response: HTTPResponse
        do {
            response = try await Self.runner(http, context: "OHTTP preflight failed: ").response(
                to: HTTPRequest(url: url), deadline: .seconds(10))
        } catch let error as AdError {
            throw error
        } catch {
            throw AdError.mars(code: .transport(.other), message: "OHTTP preflight failed: \(error)")
        }
        if let cache, response.status == 200 {
            let control = CacheControl(response.headers["Cache-Control"])
            let ttl = cache.effectiveTTL(serverMaxAge: control.maxAge, requestTTL: nil)
            if !control.noStore, ttl > 0 {
                var headers: [String: String] = [:]
                for field in response.headers { headers[field.name] = field.value }
                // Storing is best effort: a failure leaves the answer uncached.
                try? await cache.store(
                    hash: hash, url: url, status: response.status, body: response.body, headers: headers, ttl: ttl,
                    now: nowSeconds)
            }
        }
        return response
    }

    /// The preflight's cache key: its URL only.
    static func preflightHash(_ url: String) -> String {
        Hex.encode(SHA256.hash(data: Data("preflight\n\(url)".utf8)).prefix(8))
    }

    /// The cache key: endpoint, environment, flags (when any, sorted), ohttp, and the ordered placements — never the
    /// context id.
    static func requestHash(
        environment: MozAdsEnvironment, placements: [PlacementSpec], flags: [String: Bool], ohttp: Bool,
        gpp: String? = nil
    ) -> String {
        var text = "/ads\n\(environment.hashName)\n"
        if !flags.isEmpty {
            text += flags.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "\n"
        }
        text += "ohttp=\(ohttp)\n"
        if let gpp { text += "gpp=\(gpp)\n" }
        for p in placements {
            let content = p.content.map { "\($0.taxonomy.rawValue):\($0.categoryIds.joined(separator: ","))" } ?? "-"
            text += "\(p.id)|\(p.count)|\(content)\n"
        }
        let digest = SHA256.hash(data: Data(text.utf8))
        return Hex.encode(digest.prefix(8))
    }

    /// Sends (or answers from SQLite); also returns until when the answer is cached, when it is.
    func send(
        body: Data, hash: String, policy: MozAdsRequestCachePolicy?, ohttp: Bool, timeout: Duration?,
        now nowSeconds: Int64
    ) async throws(AdError) -> (HTTPResponse, Int64?) {
        let url = environment.url("ads")
        var cachedUntil: Int64?
        if let cache {
            if readsCache(policy) {
                switch await cache.lookup(hash: hash) {
                case .success(let cached?):
                    telemetry.recordHttpCacheOutcome(label: "hit", value: "")
                    var headers = HTTPHeaders()
                    for (name, value) in cached.headers { headers.add(name: name, value: value) }
                    return (HTTPResponse(status: cached.status, headers: headers, body: cached.body), cached.expiresAt)
                case .success(nil):
                    break
                case .failure(let error):
                    telemetry.recordHttpCacheOutcome(label: "lookup_failed", value: error.description)
                }
            }
        }
        let response: HTTPResponse
        do {
            var headers: HTTPHeaders = ["Content-Type": "application/json"]
            let channel = try await channel(ohttp: ohttp, headers: &headers)
            response = try await Self.runner(channel).response(
                to: HTTPRequest(method: .post, url: url, headers: headers, body: body),
                deadline: timeout ?? .seconds(60))
        } catch let error as AdError {
            throw error
        } catch {
            throw AdError.mars(code: .transport(.other), message: "\(error)")
        }
        // Only 200 responses are cached (a project decision: upstream can store and replay a 500).
        if let cache, response.status == 200 {
            let control = CacheControl(response.headers["Cache-Control"])
            if control.noStore {
                telemetry.recordHttpCacheOutcome(label: "miss_not_cacheable", value: "")
            } else {
                let ttl = cache.effectiveTTL(serverMaxAge: control.maxAge, requestTTL: policy?.ttlSeconds)
                if ttl == 0 {
                    telemetry.recordHttpCacheOutcome(label: "no_cache", value: "")
                } else {
                    var headers: [String: String] = [:]
                    for field in response.headers { headers[field.name] = field.value }
                    let stored: StorageError?
                    do {
                        try await cache.store(
                            hash: hash, url: url, status: response.status, body: response.body, headers: headers,
                            ttl: ttl, now: nowSeconds)
                        stored = nil
                    } catch {
                        stored = error
                    }
                    if let stored {
                        telemetry.recordHttpCacheOutcome(label: "store_failed", value: stored.description)
                    } else {
                        telemetry.recordHttpCacheOutcome(label: "miss_stored", value: "")
                        cachedUntil = nowSeconds + ttl
                        switch await cache.trim() {
                        case .success(let evicted):
                            if evicted > 0 {
                                parsedHits.removeAll()
                                if (try? await cache.lookup(hash: hash).get()) == nil { cachedUntil = nil }
                            }
                        case .failure(let error):
                            telemetry.recordHttpCacheOutcome(label: "trim_failed", value: error.description)
                        }
                    }
                }
            }
        }
        return (response, cachedUntil)
    }

    static func statusError(_ response: HTTPResponse) -> AdError? {
        let body = String(decoding: response.body.prefix(512), as: UTF8.self)
        switch response.status {
        case 200: return nil
        case 400: return AdError.mars(code: .badRequest, message: body)
        case 500...599: return AdError.mars(code: .server(status: response.status), message: body)
        default: return AdError.mars(code: .unexpected(status: response.status), message: body)
        }
    }

    // MARK: Cache and life cycle

    /// Deletes every cached response. Without a cache it does nothing.
    public func clearCache() async throws(AdError) {
        guard let cache else { return }
        parsedHits.removeAll()
        do {
            try await cache.clear()
        } catch {
            throw AdError.mars(code: .cache, message: error.description)
        }
    }

    /// Ends the client, as every component's `shutdown()` does: later work reports to no telemetry sink (the client
    /// runs nothing in the background of its own; its cache file is closed with the client). Idempotent; never
    /// throws.
    public func shutdown() async {
        guard !isShutDown else { return }
        isShutDown = true
        telemetry = NoOpMozAdsTelemetry()
    }
}
