import AdMediation
import AdStorage
import AdTransport
import AdapterKit
import AdapterSupport
import Crypto
import Foundation

/// How MARS's requests are sent: the ads request, the OHTTP preflight and the callbacks each go through AdapterKit's
/// ``RequestRunner`` (the HTTP cache stays in front of the ads request: a hit sends nothing). The runner puts the
/// deadline on the request (the ``HTTPClient`` enforces it), sends nothing from a cancelled task and maps a transport
/// failure once, to the seed's error (`Request failed (<code>): …`, reason `mars.transport_<code>`); the status
/// mapping stays MARS's own (`statusError`: 200 only, 400, 5xx, anything else unexpected), read after the cache
/// step as specs/mars.md §4 orders it.
extension MozAdsClient {
    /// A runner sending through `channel` (direct or the OHTTP relay); `context` prefixes a transport failure's
    /// message (`OHTTP preflight failed: `).
    static func runner(_ channel: any HTTPClient, context: String = "") -> RequestRunner {
        RequestRunner(http: channel) { AdError.mars(code: .transport($0.code), message: context + $0.message) }
    }

    /// The client a request goes through: direct, or — for `ohttp: true` — the OHTTP relay, after the preflight
    /// (`GET {base}ads-preflight`, sent directly) whose `geo_location` and `normalized_ua` travel inside the
    /// encapsulated request as `X-Geo-Location` (always) and `X-User-Agent` (when not empty). The preflight has
    /// `budget` at most (and never more than ``preflightTimeout``): it spends the time of the request it precedes.
    func channel(ohttp: Bool, headers: inout HTTPHeaders, budget: Duration) async throws(AdError) -> any HTTPClient {
        guard ohttp else { return http }
        guard let relay = ohttpHTTP else {
            throw AdError.mars(
                code: .ohttpNotConfigured,
                message:
                    "ohttp: true needs an OHTTP relay (MozAdsClientBuilder.ohttp(relayURL:keyConfigurationURL:)); "
                    + "nothing was sent"
            )
        }
        let preflight = try await preflightResponse(timeout: min(budget, Self.preflightTimeout))
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
    /// alone, TTL from `max-age` or the cache's default; specs/mars.md §5), within `timeout`.
    func preflightResponse(timeout: Duration) async throws(AdError) -> HTTPResponse {
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
                to: HTTPRequest(url: url).requiring(.forNetwork(baseURL: url), as: .api), deadline: timeout)
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

    /// The longest a preflight may take, whatever the request after it has left.
    static let preflightTimeout: Duration = .seconds(10)

    /// What is left of `budget` after a preflight that began at `started`; a timeout, with nothing more sent, when
    /// the preflight used all of it.
    static func left(of budget: Duration, since started: ContinuousClock.Instant) throws(AdError) -> Duration {
        let left = budget - (ContinuousClock.now - started)
        guard left > .zero else {
            throw AdError.mars(
                code: .transport(.timeout),
                message: "the OHTTP preflight took the request's whole \(budget) budget; nothing more was sent")
        }
        return left
    }

    /// The preflight's cache key: its URL only.
    static func preflightHash(_ url: String) -> String {
        Hex.encode(SHA256.hash(data: Data("preflight\n\(url)".utf8)).prefix(8))
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
            // One budget for the preflight and the ads request: the load's timeout bounds both.
            let budget = timeout ?? .seconds(60)
            let started = ContinuousClock.now
            let channel = try await channel(ohttp: ohttp, headers: &headers, budget: budget)
            response = try await Self.runner(channel).response(
                to: HTTPRequest(method: .post, url: url, headers: headers, body: body)
                    .requiring(destinations, as: .api),
                deadline: try Self.left(of: budget, since: started))
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
}
