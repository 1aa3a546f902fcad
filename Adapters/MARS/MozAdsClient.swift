import AdMediation
import AdStorage
import AdTransport
import AdapterKit
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
    /// The client's background work: the retired context ids' `DELETE`s. Ended by ``shutdown()``.
    let background: BackgroundSender
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
        now: @escaping @Sendable () -> Date, background: BackgroundSender
    ) {
        self.environment = environment
        self.cache = cache
        self.telemetry = telemetry
        self.contextIDProvider = contextID
        self.http = http
        self.ohttpHTTP = ohttp
        self.now = now
        self.background = background
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
        let body = RequestBody(
            contextID: contextID,
            placements: placements.map {
                RequestBody.Placement(
                    placement: $0.id, count: $0.count,
                    content: $0.content.map { .init(taxonomy: $0.taxonomy.rawValue, categories: $0.categoryIds) })
            },
            flags: flags.isEmpty ? nil : flags, consent: gpp.map { .init(gpp: $0) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, integers and booleans only: encoding cannot fail.
        return (try? encoder.encode(body)) ?? Data()
    }

    /// The ads request's body (specs/mars.md §1): `flags` and `consent` only when set; a placement's `content` is
    /// written as `null` when absent, as upstream's serde does.
    struct RequestBody: Encodable {
        struct Placement: Encodable {
            struct Content: Encodable {
                let taxonomy: String
                let categories: [String]
            }

            let placement: String
            let count: Int
            let content: Content?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(placement, forKey: .placement)
                try container.encode(count, forKey: .count)
                try container.encode(content, forKey: .content)
            }

            enum CodingKeys: String, CodingKey { case placement, count, content }
        }

        struct Consent: Encodable { let gpp: String }

        let contextID: String
        let placements: [Placement]
        let flags: [String: Bool]?
        let consent: Consent?

        enum CodingKeys: String, CodingKey {
            case placements, flags, consent
            case contextID = "context_id"
        }
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

    /// Ends the client, as every component's `shutdown()` does: a retired context id's `DELETE` still queued goes out
    /// within 2 s (then it is cancelled), and the method returns once that work has ended; later work reports to no
    /// telemetry sink (its cache file is closed with the client). Idempotent; never throws.
    public func shutdown() async {
        guard !isShutDown else { return }
        isShutDown = true
        telemetry = NoOpMozAdsTelemetry()
        await background.shutdown()
    }

    /// Retired context ids' `DELETE`s queued or in flight.
    public nonisolated var pendingContextDeletes: Int { background.pending }
}

extension MozAdsClient: BackgroundWork {}
