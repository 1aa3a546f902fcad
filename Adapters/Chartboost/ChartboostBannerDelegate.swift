import AdMediation
import AdPresentation

/// What a banner event is about.
public struct BannerAdEvent: Sendable, Hashable {
    /// The banner's location.
    public var location: String
    /// The banner's size.
    public var size: BannerSize
    /// The ad concerned, if any.
    public var adID: String?
}

/// Decides a paused click: call it once with true (the click goes ahead) or false (no click).
public final class ClickConfirmationHandler: Sendable {
    private let action: @Sendable (Bool) -> Void
    private let answered = LockedValue(false)

    init(_ action: @escaping @Sendable (Bool) -> Void) { self.action = action }

    /// Confirms (true) or cancels (false) the click. Only the first call counts.
    public func callAsFunction(_ confirmed: Bool) {
        let first = answered.withLock { answered in
            defer { answered = true }
            return !answered
        }
        if first { action(confirmed) }
    }
}

/// The banner's delegate, as in the seed. Every method is optional.
public protocol ChartboostBannerDelegate: AnyObject, Sendable {
    /// After `cache()`: an ad is cached (error nil) or caching failed.
    func didCacheAd(_ event: BannerAdEvent, error: AdError?)
    /// Right before an ad is presented (or the presentation failed).
    func willShowAd(_ event: BannerAdEvent, error: AdError?)
    /// The ad was presented and its impression logged (or the presentation failed).
    func didShowAd(_ event: BannerAdEvent, error: AdError?)
    /// Return true to pause the click until `confirmationHandler` is called; false (the default) handles it at once.
    func shouldConfirmClick(_ event: BannerAdEvent, confirmationHandler: ClickConfirmationHandler) -> Bool
    /// The ad was clicked (error when the click could not be handled).
    func didClickAd(_ event: BannerAdEvent, error: AdError?)
    /// The click's destination was closed and the user is back.
    func didFinishHandlingClick(_ event: BannerAdEvent, error: AdError?)
}

extension ChartboostBannerDelegate {
    /// Does nothing.
    public func didCacheAd(_ event: BannerAdEvent, error: AdError?) {}
    /// Does nothing.
    public func willShowAd(_ event: BannerAdEvent, error: AdError?) {}
    /// Does nothing.
    public func didShowAd(_ event: BannerAdEvent, error: AdError?) {}
    /// Handles clicks without confirmation.
    public func shouldConfirmClick(_ event: BannerAdEvent, confirmationHandler: ClickConfirmationHandler) -> Bool {
        false
    }
    /// Does nothing.
    public func didClickAd(_ event: BannerAdEvent, error: AdError?) {}
    /// Does nothing.
    public func didFinishHandlingClick(_ event: BannerAdEvent, error: AdError?) {}
}
