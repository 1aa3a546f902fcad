import AdMediation
import AdTransport
import AdapterKit
import AdapterSupport
import Foundation

/// MARS as an ``AdNetwork``: `tile`, `spoc` and `image` placements become formats the mediator can request.
/// Events map to the callbacks: impression, click, and `reported(reason:)` (a ``MozAdsReportReason`` wire value).
/// An ad's callbacks are queued and sent in the background, once each as MARS's client sends them (no retry: the
/// contract has none), so reporting an event never waits for the callback's answer; each waits for its ad's previous
/// callback to have been attempted, so MARS sees one ad's callbacks in the order they were reported.
///
/// Privacy: MARS's ad request carries only a GPP string (`consent.gpp`), which is sent when set; the other
/// signals have no field in the contract.
public struct MarsNetwork: AdNetwork {
    /// The network id.
    public let id: String
    /// Tiles, spocs and images; unpriced.
    public let capabilities = AdNetworkCapabilities(
        formats: [.tile, .spoc, .image], reportsPrice: false)
    private let client: MozAdsClient
    private let clock: any AdClock
    private let adTTL: Duration
    private let ohttp: Bool
    /// The callbacks, queued and sent in the background (nothing starts before the first).
    private let callbacks: BackgroundSender

    /// Wraps `client`. Ads expire `adTTL` after loading (default 30 minutes). With `ohttp`, ad requests and
    /// callbacks go through the client's Oblivious HTTP relay
    /// (``MozAdsClientBuilder/ohttp(relayURL:keyConfigurationURL:)``;
    /// without one they fail with ``AdError/Code/unsupported`` and nothing is sent).
    public init(
        id: String = "mars", client: MozAdsClient, clock: any AdClock = SystemAdClock(),
        adTTL: Duration = .seconds(1800),
        ohttp: Bool = false
    ) {
        self.id = id
        self.client = client
        self.clock = clock
        self.adTTL = adTTL
        self.ohttp = ohttp
        self.callbacks = BackgroundSender(clock: clock, limits: Self.callbackLimits)
    }

    /// One attempt per callback (the client's own 60 s deadline), 1 000 waiting, 4 at once, 2 s at shutdown.
    static let callbackLimits = BackgroundSender.Limits(
        attempts: 1, timeout: .seconds(60), deadline: .seconds(60), queue: 1000, concurrency: 4,
        shutdownGrace: .seconds(2))

    /// Ends the network and its client: sends the queued callbacks for at most 2 s (on the network's clock), then
    /// cancels what is left and returns once the sender has stopped, then ends the client
    /// (``MozAdsClient/shutdown()``: its context-id `DELETE`); callbacks after this are dropped. Idempotent.
    public func shutdown() async {
        await callbacks.shutdown()
        await client.shutdown()
    }

    /// Callbacks queued or in flight.
    public var pendingCallbacks: Int { callbacks.pending }

    /// Requests one ad for the placement.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        guard [AdFormat.tile, .spoc, .image].contains(request.format) else {
            throw AdError(.configuration, "MARS serves tile, spoc and image, not \(request.format)")
        }
        let spec = MozAdsClient.PlacementSpec(id: request.placement, count: 1, content: nil)
        let ads: [String: [MozAdsClient.DecodedAd]]
        do {
            let kind: MozAdsClient.Kind =
                switch request.format {
                case .tile: .tile
                case .spoc: .spoc
                default: .image
                }
            ads = try await client.fetch(
                [spec], kind: kind, options: MozAdsRequestOptions(ohttp: ohttp), timeout: request.timeout,
                gpp: request.privacy.gpp)
        } catch {
            throw Self.adError(error)
        }
        try Task.checkCancellation()
        guard let ad = ads[request.placement]?.first else {
            return .noFill(NoFill(reason: "placement absent from the response"))
        }
        let creative: AdCreative
        switch request.format {
        case .tile:
            guard let tile = MozAdsClient.tile(ad) else { return .noFill(NoFill(reason: "not a tile")) }
            creative = AdCreative(
                id: tile.blockKey, kind: "tile", assetURL: tile.imageUrl, clickURL: tile.url,
                fields: ["name": tile.name, "format": tile.format])
        case .spoc:
            guard let spoc = MozAdsClient.spoc(ad) else { return .noFill(NoFill(reason: "not a spoc")) }
            creative = AdCreative(
                id: spoc.blockKey, kind: "spoc", assetURL: spoc.imageUrl, clickURL: spoc.url,
                fields: [
                    "title": spoc.title, "domain": spoc.domain, "excerpt": spoc.excerpt,
                    "sponsor": spoc.sponsoredByOverride ?? spoc.sponsor,
                ])
        default:
            guard let image = MozAdsClient.image(ad) else { return .noFill(NoFill(reason: "not an image")) }
            creative = AdCreative(
                id: image.blockKey, kind: "image", assetURL: image.imageUrl, clickURL: image.url,
                fields: ["format": image.format, "alt_text": image.altText ?? ""])
        }
        let now = clock.now
        return .filled(
            LoadedAd(
                networkID: id, placement: request.placement, format: request.format, creative: creative,
                loadedAt: now, expiresAt: now + adTTL,
                reporter: Callbacks(
                    client: client, callbacks: ad.callbacks, options: MozAdsCallbackOptions(ohttp: ohttp),
                    sender: callbacks)))
    }

    /// Anything the client throws as an ``AdError`` (it throws nothing else; a stray error is a network failure).
    static func adError(_ error: any Error) -> AdError {
        error as? AdError ?? AdError(.network, "\(error)")
    }

    /// MARS has callbacks for the impression, the click and a report: each is checked (an absolute URL, a known
    /// report reason) and ``AdEventDelivery/queued`` for the background sender; every other event (`ad_closed`, video
    /// events) is ``AdEventDelivery/notSent``. A callback is refused here only when it can never be sent (no report
    /// URL, an unknown reason, an invalid URL, the queue full or shut down).
    private final class Callbacks: AdEventReporter {
        let client: MozAdsClient
        let callbacks: MozAdsCallbacks
        let options: MozAdsCallbackOptions
        let sender: BackgroundSender

        init(
            client: MozAdsClient, callbacks: MozAdsCallbacks, options: MozAdsCallbackOptions, sender: BackgroundSender
        ) {
            self.client = client
            self.callbacks = callbacks
            self.options = options
            self.sender = sender
        }

        /// Fired once the ad's latest queued callback was attempted (or dropped): the next one waits for it, so MARS
        /// sees one ad's callbacks in the order they were reported.
        let latest = LockedValue(OnceSignal.fired)

        func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
            let (client, options) = (client, options)
            let url: String
            let send: @Sendable () async throws -> Void
            switch record.event {
            case .impression:
                url = callbacks.impression
                send = { try await client.recordImpression(url, options: options) }
            case .click:
                url = callbacks.click
                send = { try await client.recordClick(url, options: options) }
            case .reported(let reason):
                guard let report = callbacks.report else {
                    throw AdError(.unsupported, "this ad has no report callback")
                }
                guard let wire = MozAdsReportReason(rawValue: reason) else {
                    throw AdError(
                        .configuration,
                        "report reason must be one of \(MozAdsReportReason.allCases.map(\.rawValue)), got \(reason)")
                }
                url = report
                send = { try await client.reportAd(report, reason: wire, options: options) }
            default:
                return .notSent
            }
            let policy = client.destinations
            guard MozAdsClient.isAbsoluteURL(url) else { throw AdError.mars(code: .invalidCallbackURL, message: url) }
            do throws(DestinationRefusal) {
                try policy.check(url, as: .callback)
            } catch {
                // Refused by the destination policy: nothing queued; the message names the host and the reason only.
                DestinationPolicy.record(error, kind: .callback, network: "mars")
                throw AdError.mars(code: .invalidCallbackURL, message: error.description)
            }
            // The client builds the callback's request (the `cap_key` removed, OHTTP, its destination rule) and
            // counts it in its telemetry; the sender only queues it and runs it once, after the ad's previous one.
            let attempted = OnceSignal()
            // Under the ad's lock: its callbacks enter the queue in the order they wait for each other.
            let queued = latest.withLock { latest in
                let previous = latest
                latest = attempted
                return sender.send(url, meeting: DestinationRule(policy: policy, kind: .callback)) { _ in
                    defer { attempted.fire() }
                    await previous.wait()
                    try await send()
                    return HTTPResponse(status: 200)
                }
            }
            if !queued { attempted.fire() }
            guard queued else {
                throw AdError(.network, "the \(record.event) callback was dropped: the queue is full or shut down")
            }
            return .queued
        }
    }

}

extension MarsNetwork: BackgroundWork {}
