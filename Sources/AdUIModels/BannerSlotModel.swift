import AdMediation
import AdPresentation
import Observation

/// A banner slot as an observable model: the app's banner view draws ``creative`` (the current ad's image, markup or
/// text fields) and calls ``drawn()`` once it is on screen, which is when the impression counts.
///
/// The model owns no rule: its `BannerRefreshController` loads, refreshes on its timer (paused while hidden, in the
/// background or covered, resuming with the time left), backs off after failures and reports the impression at
/// ``drawn()``. The model follows the controller's events in one task and publishes the ad each one shows; that task
/// and the controller end at ``stop()`` (or when the model is released).
///
/// ```swift
/// let slot = BannerSlotModel(network: mediator, placement: "home_banner")
/// await slot.start()        // when the banner view appears
/// await slot.drawn()        // when the view has drawn `slot.creative`
/// ```
@MainActor
@Observable
public final class BannerSlotModel {
    /// The creative of the ad on screen, to draw; nil while the slot is empty.
    public private(set) var creative: AdCreative?
    /// The network that filled the ad on screen; nil while the slot is empty.
    public private(set) var networkID: String?
    /// Whether the impression of the ad on screen was logged with its network (after ``drawn()``).
    public private(set) var impressionCounted = false
    /// Whether the refresh timer is paused (hidden, in the background or covered by a full-screen ad).
    public private(set) var isPaused = false
    /// The last failed load or impression, for diagnostics; cleared when an ad is shown.
    public private(set) var lastFailure: String?

    /// The slot's rules, for what the model does not publish (its `history`, `nextRefresh`). The model reads its
    /// `events`: do not iterate them elsewhere.
    @ObservationIgnored public let controller: BannerRefreshController
    @ObservationIgnored private var following: Task<Void, Never>?
    @ObservationIgnored private var stopped = false

    /// A slot for `placement` on `network` (a `Mediator` or one network), in `format`, refreshed under `policy` on
    /// `clock`. Nothing starts before ``start()``.
    public init(
        network: any AdNetwork, placement: String, format: AdFormat = .banner(.standard),
        policy: BannerRefreshPolicy = BannerRefreshPolicy(), clock: any AdClock = SystemAdClock()
    ) {
        controller = BannerRefreshController(
            network: network, request: AdRequest(placement: placement, format: format), policy: policy, clock: clock)
    }

    /// Starts the slot (loads and shows the first ad, then refreshes) and follows what it shows. Does nothing once
    /// started or after ``stop()``.
    public func start() async {
        guard following == nil, !stopped else { return }
        let events = controller.events
        following = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        }
        await controller.start()
    }

    /// The view drew ``creative`` (its first frame is visible): the impression is reported now, once. A call for an
    /// ad that a refresh has replaced meanwhile counts nothing.
    public func drawn() async {
        guard let creative else { return }
        await controller.drawn(adID: creative.id)
    }

    /// The user tapped the banner (after the app opened its click-through): the click is reported, and the slot
    /// refreshes.
    public func tapped() async { await controller.adClicked() }

    /// Pauses the refresh timer for `reason` (`.hidden` when the view disappears, `.background`,
    /// `.coveredByFullScreenAd`); it keeps the time left.
    public func pause(_ reason: BannerPauseReason) async { await controller.pause(reason) }

    /// Lifts `reason`; the timer resumes with the time it had left once no reason holds.
    public func resume(_ reason: BannerPauseReason) async { await controller.resume(reason) }

    /// Ends the slot for good: the controller stops (its ads are invalidated, nothing more is loaded or reported), the
    /// model's task ends and the slot is empty. Make a new model to start again.
    public func stop() async {
        stopped = true
        await controller.stop()
        following?.cancel()
        following = nil
        creative = nil
        networkID = nil
        impressionCounted = false
    }

    private func handle(_ event: BannerRefreshController.Event) async {
        guard !stopped else { return }
        switch event {
        case .shown(let adID, let network):
            // The ad on screen, read now: a show replaced since is published by its own event.
            guard let ad = await controller.currentAd, ad.creative.id == adID, !stopped else { return }
            creative = ad.creative
            networkID = network
            impressionCounted = false
            lastFailure = nil
        case .impression(let adID):
            if creative?.id == adID { impressionCounted = true }
        case .impressionFailed(_, let message), .loadFailed(let message):
            lastFailure = message
        case .unusableFill(_, let reason, _):
            lastFailure = reason
        case .paused:
            isPaused = true
        case .resumed:
            isPaused = false
        case .scheduled, .clicked:
            break
        }
    }
}
