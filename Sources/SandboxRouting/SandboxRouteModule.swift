import Foundation

/// One network's routes in the demand sandbox, mounted under `/<network>/`: how every network gets a sandbox of its
/// own, built in or not (docs/ARCHITECTURE.md, "Adding a network"). The sandbox counts each request in its records,
/// and for an ad request (``SandboxReply/ad(placement:render:)``) draws the scenario of `<network>/<placement>`
/// (fill, price, latency, fault), so scenario files, `--demo` faults and the admin API work for it unchanged.
public protocol SandboxRouteModule: Sendable {
    /// The first path segment, which is also the network's key in a sandbox scenario: `echo` for `/echo/v1/ad`.
    /// Lower-case letters, digits, `-` and `_`. A module named `admin` or `ohttp` (served by the sandbox itself) is
    /// never reached. A module of the sandbox's configuration named like a built-in network of the registry
    /// (`growthcat`, `mars`, `chartboost`, `appopen`, `openrtb`) replaces the registry's (a built-in's routes with
    /// other settings); two of the configuration's with one name: the first is reached.
    var network: String { get }

    /// Answers one request under `/<network>/`.
    func respond(to request: SandboxRequest) -> SandboxReply

    /// What the module recorded of its own (beyond the sandbox's request counts, tracking hits and privacy fields),
    /// as JSON, for the admin API (`GET /admin/records`, under `modules.<network>`); nil, the default, when it keeps
    /// none. A module that records is made anew for each sandbox, so two sandboxes never share its records.
    func recordsJSON() -> Data?

    /// Forgets what the module recorded (`POST /admin/reset`). The default does nothing.
    func resetRecords()

    /// A line the network fills in this sandbox, with the settings that reach it: the fixture the fault matrix, the
    /// fuzzers and `mediate --demo` build the network from. Nil, the default, when the network has none (an OpenRTB
    /// bidder is named by the app, under `/openrtb/<name>`).
    var sample: SandboxSample? { get }
}

extension SandboxRouteModule {
    /// Keeps no records: nil.
    public func recordsJSON() -> Data? { nil }
    /// Keeps no records: nothing to forget.
    public func resetRecords() {}
    /// No sample line: nil.
    public var sample: SandboxSample? { nil }

    /// `records` in the admin API's form, as the sandbox writes its own: snake_case keys, sorted; nil if they cannot
    /// be encoded. For ``recordsJSON()``.
    public func adminJSON(_ records: some Encodable) -> Data? {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try? encoder.encode(records)
    }
}

/// A request to a ``SandboxRouteModule``.
public struct SandboxRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path after `/<network>`, e.g. `/v1/ad`.
    public var path: String
    /// The query's items (the last value of a repeated name).
    public var query: [String: String]
    /// The body (at most 1 MiB).
    public var body: Data
    /// The module's base URL, `http://HOST:PORT/<network>`, for URLs in answers (tracking, creatives).
    public var baseURL: String
    /// The sandbox's root URL, `http://HOST:PORT`, for URLs served by the sandbox outside the module (shared assets).
    public var rootURL: String
    /// The request target as sent: the whole path (with `/<network>`) and the query, undecoded (what a signature
    /// covers).
    public var target: String
    /// Header fields by lower-case name (repeated fields joined with `, `).
    let headers: [String: String]

    /// Creates a request (the sandbox does; a module's own unit tests may too).
    public init(
        method: String, path: String, query: [String: String] = [:], body: Data = Data(), baseURL: String,
        rootURL: String, target: String? = nil, headers: [String: String] = [:]
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.body = body
        self.baseURL = baseURL
        self.rootURL = rootURL
        self.target = target ?? path
        var lowered: [String: String] = [:]
        for (name, value) in headers {
            let key = name.lowercased()
            lowered[key] = lowered[key].map { $0 + ", " + value } ?? value
        }
        self.headers = lowered
    }

    /// The value of the header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// What the sandbox drew for an ad request that fills (``SandboxReply/ad(placement:options:render:)``).
public struct SandboxFill: Sendable {
    /// The drawn price, USD CPM, rounded to cents.
    public var ecpm: Double
    /// A number unique in this sandbox's life, for ad ids.
    public var serial: Int

    /// Creates a draw (the sandbox does; a module's own unit tests may too).
    public init(ecpm: Double, serial: Int) {
        self.ecpm = ecpm
        self.serial = serial
    }
}

/// What the sandbox drew for a request of several placements (``SandboxReply/ads(placements:headers:render:)``).
public struct SandboxDraws: Sendable {
    /// Per placement, in the order asked: the drawn price when it fills, nil when it does not.
    public var prices: [Double?]
    private let nextSerial: @Sendable () -> Int

    /// Creates the draws (the sandbox does; a module's own unit tests may too); `serial` numbers the ads.
    public init(prices: [Double?], serial: @escaping @Sendable () -> Int) {
        self.prices = prices
        self.nextSerial = serial
    }

    /// A number unique in this sandbox's life, for one ad's id (a new one per call).
    public func serial() -> Int { nextSerial() }
}

/// How the sandbox treats one ad request (``SandboxReply/ad(placement:options:render:)``).
public struct SandboxAdOptions: Sendable {
    /// The request's privacy fields as received (e.g. `gdpr=1&us_privacy=1YNN`), kept in the sandbox's records for
    /// privacy assertions. Default none (nothing recorded).
    public var privacy: String?
    /// Fills whatever the scenario's fill rate (a network's documented test ad unit); latency and faults still apply.
    /// Default false.
    public var alwaysFills = false
    /// The scenario's network to draw from, when not the module's own (OpenRTB: each bidder name is a network of the
    /// scenario). Default nil: the module's ``SandboxRouteModule/network``.
    public var scenarioNetwork: String?
    /// A drawn price under it is a no fill (a bid floor). Default 0.
    public var floor: Double = 0
    /// The answer to a no fill: 200 with this JSON body (OpenRTB's `nbr`). Default nil: 204 with no body.
    public var noFillBody: Data?

    /// The defaults.
    public init() {}
}

/// What the sandbox drew for an ad request answered whether it fills or not
/// (``SandboxReply/drawn(placement:privacy:render:)``).
public struct SandboxDraw: Sendable {
    /// Whether the request fills.
    public var fills: Bool
    /// The drawn price, USD CPM, rounded to cents (drawn on a no fill too).
    public var ecpm: Double
    private let nextSerial: @Sendable () -> Int

    /// Creates a draw (the sandbox does; a module's own unit tests may too); `serial` numbers the ads.
    public init(fills: Bool, ecpm: Double, serial: @escaping @Sendable () -> Int) {
        self.fills = fills
        self.ecpm = ecpm
        self.nextSerial = serial
    }

    /// A number unique in this sandbox's life, for one ad's id (a new one per call).
    public func serial() -> Int { nextSerial() }
}

/// A fault the sandbox drew for a request that is not an ad request
/// (``SandboxReply/withRequestFault(placement:key:then:)``): one of the scenario's `validation_faults`.
public struct SandboxRequestFault: Sendable, Hashable {
    /// What goes wrong, as the scenario names it: `status`, `reset`, `lost_answer` or `late_answer` (the module
    /// decides what each means for its request; a kind it does not know is best treated as no fault).
    public var kind: String
    /// The status for a `status` fault (the scenario's, 100…599 when read from a file).
    public var status: Int
    /// How late a `late_answer` comes.
    public var delay: Duration

    /// Creates a fault (the sandbox does; a module's own unit tests may too).
    public init(kind: String, status: Int = 503, delay: Duration = .zero) {
        self.kind = kind
        self.status = status
        self.delay = delay
    }
}

/// A ``SandboxRouteModule``'s answer.
public struct SandboxReply: Sendable {
    package indirect enum Kind: Sendable {
        case plain(status: Int, json: Data?)
        case tracked(status: Int)
        case ad(placement: String, options: SandboxAdOptions, render: @Sendable (SandboxFill) -> Data)
        case ads(placements: [String], headers: [String: String], render: @Sendable (SandboxDraws) -> Data)
        case bytes(status: Int, contentType: String, body: Data)
        case drawn(placement: String?, privacy: String?, render: @Sendable (SandboxDraw) -> Data)
        case reset
        case delayed(Duration, SandboxReply)
        case requestFault(placement: String?, key: String, then: @Sendable (SandboxRequestFault?) -> SandboxReply)
    }
    package let kind: Kind

    /// A JSON answer with `status`.
    public static func json(_ status: Int, _ body: Data) -> SandboxReply {
        SandboxReply(kind: .plain(status: status, json: body))
    }

    /// A JSON answer with `status` and `value` encoded, keys sorted (the same bytes for the same value); `{}` if
    /// `value` cannot be encoded.
    public static func json(_ status: Int, encoding value: some Encodable) -> SandboxReply {
        json(status, encoded(value))
    }

    /// The error answer the wire contracts share, `{"error": {"code": …, "message": …}}`, with `status`.
    public static func error(_ status: Int, code: String, message: String) -> SandboxReply {
        struct Body: Encodable {
            struct Detail: Encodable {
                var code: String
                var message: String
            }
            var error: Detail
        }
        return json(status, encoding: Body(error: Body.Detail(code: code, message: message)))
    }

    /// `value` as JSON with sorted keys, or `{}` if it cannot be encoded (for ``ad(placement:options:render:)``'s
    /// `render`).
    public static func encoded(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// An answer with `status` and no body (e.g. 204 for a tracking hit).
    public static func empty(_ status: Int) -> SandboxReply { SandboxReply(kind: .plain(status: status, json: nil)) }

    /// A tracking hit: kept in the sandbox's records (its tracking hits: the network, the full path and the query),
    /// answered with `status` and no body.
    public static func tracked(_ status: Int = 204) -> SandboxReply { SandboxReply(kind: .tracked(status: status)) }

    /// An ad request for `placement`: the sandbox draws the scenario of `<network>/<placement>`; on a fill it answers
    /// 200 with `render(ecpm)` (JSON, the drawn price), on no fill 204; the drawn latency and fault apply to both.
    public static func ad(placement: String, render: @escaping @Sendable (Double) -> Data) -> SandboxReply {
        ad(placement: placement, options: SandboxAdOptions()) { fill in render(fill.ecpm) }
    }

    /// An ad request for several placements at once (MARS): the sandbox draws each placement's scenario
    /// (`<network>/<placement>`); the first draw's latency and fault apply to the answer, which is 200 with
    /// `render(draws)` (JSON) and `headers`.
    public static func ads(
        placements: [String], headers: [String: String] = [:],
        render: @escaping @Sendable (SandboxDraws) -> Data
    ) -> SandboxReply {
        SandboxReply(kind: .ads(placements: placements, headers: headers, render: render))
    }

    /// ``ad(placement:render:)`` with `options`, and the whole draw (price and a serial number) handed to `render`.
    public static func ad(
        placement: String, options: SandboxAdOptions, render: @escaping @Sendable (SandboxFill) -> Data
    ) -> SandboxReply {
        SandboxReply(kind: .ad(placement: placement, options: options, render: render))
    }

    /// An answer with `status`, `body` as it is and `contentType` (e.g. a creative's bytes, `image/png`).
    public static func data(_ status: Int, _ body: Data, contentType: String) -> SandboxReply {
        SandboxReply(kind: .bytes(status: status, contentType: contentType, body: body))
    }

    /// No answer: the sandbox resets the connection (a TCP RST), as a server that crashed or lost the answer would.
    public static let reset = SandboxReply(kind: .reset)

    /// `reply`, given after `delay` (an answer that comes late). The connection stays open meanwhile.
    public static func delayed(_ delay: Duration, _ reply: SandboxReply) -> SandboxReply {
        SandboxReply(kind: .delayed(delay, reply))
    }

    /// An ad request answered 200 with `render(draw)` (JSON) whether it fills or not (a catalog whose list of ads
    /// may be empty): the sandbox draws the scenario of `<network>/<placement>` (of `<network>` for a nil
    /// `placement`) once, and the drawn latency and fault apply. `privacy`: the request's privacy fields as received,
    /// kept in the sandbox's records (as ``SandboxAdOptions/privacy``); nil records nothing.
    public static func drawn(
        placement: String?, privacy: String? = nil, render: @escaping @Sendable (SandboxDraw) -> Data
    ) -> SandboxReply {
        SandboxReply(kind: .drawn(placement: placement, privacy: privacy, render: render))
    }

    /// A request that is not an ad request but may be faulted by the scenario (a reward validation): the sandbox
    /// draws one of the `validation_faults` of `<network>/<placement>` (of `<network>` for a nil `placement`), at
    /// most `max_validation_faults` times per `key` (the attempts of one request share it, so a client that retries
    /// enough gets an answer), and answers `then(fault)` — nil when none was drawn. No draw at all (the scenario's
    /// seeded sequence stays as it was) when the scenario has no validation faults.
    public static func withRequestFault(
        placement: String?, key: String, then: @escaping @Sendable (SandboxRequestFault?) -> SandboxReply
    ) -> SandboxReply {
        SandboxReply(kind: .requestFault(placement: placement, key: key, then: then))
    }
}
