import AdMediation
import Foundation

/// An in-process `AdNetwork` that answers from a script: fills, no fills, errors and latencies, on an injected
/// clock. Use it in your own tests, and to drive mediators without a server. It is also its own wire probe for the
/// conformance kit: each load and each event is recorded as a "wire" request.
public final class ScriptedAdNetwork: AdNetwork {
    /// One scripted answer.
    public enum Step: Sendable, Hashable {
        /// Fill after `latency` with this price, expiring `ttl` after the load (nil: never).
        case fill(ecpm: Double? = nil, latency: Duration = .zero, ttl: Duration? = .seconds(3600))
        /// No fill after `latency`.
        case noFill(latency: Duration = .zero)
        /// Fail with `error` after `latency`.
        case fail(AdError, latency: Duration = .zero)
        /// Never answer (until cancelled or timed out).
        case hang
    }

    private struct State {
        var scripts: [String: [Step]] = [:]
        var requests: [AdRequest] = []
        var wire: [String] = []
        var inFlight = 0
        var cancellations = 0
        var loads = 0
        var events: [(creative: String, event: AdEvent)] = []
        var records: [AdEventRecord] = []
        var auctions: [(creative: String, result: AuctionResult)] = []
    }

    /// The network's id.
    public let id: String
    /// The formats it serves (all by default).
    public let capabilities: AdNetworkCapabilities
    private let clock: any AdClock
    private let fallback: Step
    private let state = LockedValue(State())

    /// Creates a network. `script` maps placement ids to answers consumed in order (the last one repeats);
    /// placements without a script answer `fallback`.
    public init(
        id: String,
        formats: Set<AdFormat.Kind> = Set(AdFormat.Kind.builtIn),
        clock: any AdClock = SystemAdClock(),
        script: [String: [Step]] = [:],
        fallback: Step = .noFill()
    ) {
        self.id = id
        self.capabilities = AdNetworkCapabilities(formats: formats, reportsPrice: true)
        self.clock = clock
        self.fallback = fallback
        state.withLock { $0.scripts = script }
    }

    /// Replaces the script of `placement`.
    public func setScript(_ steps: [Step], for placement: String) {
        state.withLock { $0.scripts[placement] = steps }
    }

    /// Every request received, in order.
    public var requests: [AdRequest] { state.withLock { $0.requests } }
    /// Loads started.
    public var loadCount: Int { state.withLock { $0.loads } }
    /// Loads that ended because their task was cancelled.
    public var cancellationCount: Int { state.withLock { $0.cancellations } }
    /// Events reported, with the creative id.
    public var reportedEvents: [(creative: String, event: AdEvent)] { state.withLock { $0.events } }
    /// The event records the network received, in order (when each event happened, its occurrence, the ad).
    public var reportedRecords: [AdEventRecord] { state.withLock { $0.records } }
    /// Auction results settled on its ads (`LoadedAd.settleAuction(_:)`), with the creative id, in order.
    public var auctionResults: [(creative: String, result: AuctionResult)] { state.withLock { $0.auctions } }
    /// Wire records (loads and events).
    public var requestCount: Int { state.withLock { $0.wire.count } }
    /// Loads in progress.
    public var requestsInFlight: Int { state.withLock { $0.inFlight } }
    /// Wire records as text.
    public var requestTexts: [String] { state.withLock { $0.wire } }

    /// Answers from the script, honouring cancellation and `request.timeout`.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        let (step, serial) = state.withLock { s -> (Step, Int) in
            s.loads += 1
            s.inFlight += 1
            s.requests.append(request)
            s.wire.append(
                "load \(request.placement) \(request.format.name) privacy=\(Self.describe(request.privacy)) "
                    + "user=\(request.userID ?? "")"
            )
            var steps = s.scripts[request.placement] ?? []
            let step = steps.first ?? fallback
            if steps.count > 1 {
                steps.removeFirst()
                s.scripts[request.placement] = steps
            }
            return (step, s.loads)
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        let start = clock.now
        let latency: Duration? =
            switch step {
            case .fill(_, let latency, _), .noFill(let latency), .fail(_, let latency): latency
            case .hang: nil
            }
        do {
            if let timeout = request.timeout, latency == nil || latency! > timeout {
                try await clock.sleep(until: start + timeout)
                throw AdError(
                    .timeout, "\(id) did not answer \(request.placement) within \(Int(timeout.milliseconds)) ms")
            }
            if let latency {
                if latency > .zero { try await clock.sleep(until: start + latency) }
            } else {
                try await clock.sleep(until: AdInstant(nanoseconds: .max))
            }
            try Task.checkCancellation()
        } catch is CancellationError {
            state.withLock { $0.cancellations += 1 }
            throw AdError(.cancelled, "load of \(request.placement) was cancelled")
        }
        switch step {
        case .fill(let ecpm, _, let ttl):
            let now = clock.now
            return .filled(
                LoadedAd(
                    networkID: id,
                    placement: request.placement,
                    format: request.format,
                    creative: AdCreative(
                        id: "\(id)-\(request.placement)-\(serial)", kind: "image",
                        assetURL: "https://example.invalid/\(serial).png"),
                    ecpm: ecpm,
                    loadedAt: now,
                    expiresAt: ttl.map { now + $0 },
                    reporter: Reporter(network: self)))
        case .noFill:
            return .noFill(NoFill(reason: "scripted no fill"))
        case .fail(let error, _):
            throw error
        case .hang:
            throw AdError(.invalidState, "unreachable")
        }
    }

    fileprivate func record(_ record: AdEventRecord) {
        let event = record.event, creative = record.ad.creative.id
        state.withLock {
            $0.records.append(record)
            $0.events.append((creative, event))
            $0.wire.append("event \(event.name) \(creative)")
        }
    }

    static func describe(_ p: PrivacySignals) -> String {
        [
            "gdpr=\(p.gdprApplies.map { $0 ? "1" : "0" } ?? "")",
            "tcf=\(p.tcfConsent ?? "")",
            "us_privacy=\(p.usPrivacy ?? "")",
            "gpp=\(p.gpp ?? "")",
            "gpp_sid=\(p.gppSectionIDs.map(String.init).joined(separator: ","))",
            "coppa=\(p.coppa ? 1 : 0)",
            "under_age=\(p.underAgeOfConsent ? 1 : 0)",
        ].joined(separator: "&")
    }

    private struct Reporter: AdEventReporter {
        let network: ScriptedAdNetwork
        func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
            network.record(record)
            return .delivered
        }

        func settle(_ result: AuctionResult, for ad: LoadedAd) {
            network.state.withLock { $0.auctions.append((ad.creative.id, result)) }
        }
    }
}
