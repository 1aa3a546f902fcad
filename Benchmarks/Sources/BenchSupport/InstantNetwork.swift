import AdMediation

/// The cheapest possible network: answers at once, no bookkeeping (ScriptedAdNetwork records every request, which
/// would dominate a measurement of the mediator). Shared by `mediator-bench` and `MediatorMicro`.
public struct InstantNetwork: AdNetwork {
    /// The network's id.
    public let id: String
    /// Whether it fills (otherwise it answers no fill).
    public let fills: Bool
    /// Interstitials only.
    public let capabilities = AdNetworkCapabilities(formats: [.interstitial])

    /// A network `id` that fills or not.
    public init(id: String, fills: Bool) {
        self.id = id
        self.fills = fills
    }

    /// Answers at once.
    public func load(_ request: AdRequest) async throws -> AdLoadResult {
        guard fills else { return .noFill(NoFill(reason: "none")) }
        return .filled(
            LoadedAd(
                networkID: id, placement: request.placement, format: request.format,
                creative: AdCreative(id: "c", kind: "image"), ecpm: 1, loadedAt: .zero))
    }
}
