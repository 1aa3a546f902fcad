import AdMediation
import Foundation

/// MARS as an ``AdNetwork``: `tile`, `spoc` and `image` placements become formats the mediator can request.
/// Events map to the callbacks: impression, click, and `reported(reason:)` (a ``MozAdsReportReason`` wire value).
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
    }

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
                    client: client, callbacks: ad.callbacks, options: MozAdsCallbackOptions(ohttp: ohttp))))
    }

    /// Anything the client throws as an ``AdError`` (it throws nothing else; a stray error is a network failure).
    static func adError(_ error: any Error) -> AdError {
        error as? AdError ?? AdError(.network, "\(error)")
    }

    /// MARS has callbacks for the impression, the click and a report: those are ``AdEventDelivery/delivered`` once
    /// the callback answered 200; every other event (`ad_closed`, video events) is ``AdEventDelivery/notSent``.
    private struct Callbacks: AdEventReporter {
        let client: MozAdsClient
        let callbacks: MozAdsCallbacks
        let options: MozAdsCallbackOptions

        func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
            do {
                switch record.event {
                case .impression: try await client.recordImpression(callbacks.impression, options: options)
                case .click: try await client.recordClick(callbacks.click, options: options)
                case .reported(let reason):
                    guard let url = callbacks.report else {
                        throw AdError(.unsupported, "this ad has no report callback")
                    }
                    guard let wire = MozAdsReportReason(rawValue: reason) else {
                        throw AdError(
                            .configuration,
                            "report reason must be one of \(MozAdsReportReason.allCases.map(\.rawValue)), got \(reason)"
                        )
                    }
                    try await client.reportAd(url, reason: wire, options: options)
                default:
                    return .notSent
                }
                return .delivered
            } catch {
                throw MarsNetwork.adError(error)
            }
        }
    }
}
