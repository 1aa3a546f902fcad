import AdMediation

extension AdError.Reason {
    /// A banner's load failed (the error's code and message are the network's).
    public static let bannerLoadFailed = AdError.Reason(domain: "banner", name: "load_failed")
    /// The network had no banner (code ``AdError/Code/noFill``).
    public static let bannerNoFill = AdError.Reason(domain: "banner", name: "no_fill")
    /// `show()` was called with no cached ad (code ``AdError/Code/invalidState``).
    public static let bannerNoCachedAd = AdError.Reason(domain: "banner", name: "no_cached_ad")
    /// The cached ad expired before it was shown (code ``AdError/Code/invalidState``).
    public static let bannerExpired = AdError.Reason(domain: "banner", name: "expired")
    /// Reporting the click failed.
    public static let bannerClickFailed = AdError.Reason(domain: "banner", name: "click_failed")
    /// The app's click confirmation gate declined the click: no link opens (code ``AdError/Code/cancelled``).
    public static let bannerClickDeclined = AdError.Reason(domain: "banner", name: "click_declined")
    /// The ad was presented but its impression could not be logged (`didShowAd` carries it).
    public static let bannerImpressionFailed = AdError.Reason(domain: "banner", name: "impression_failed")
}

extension AdError {
    /// `error` as a banner failure with `reason`: an ``AdError`` keeps its code and message, anything else is a
    /// network failure.
    package static func banner(_ reason: Reason, _ error: any Error) -> AdError {
        guard var adError = error as? AdError else { return AdError(.network, "\(error)", reason: reason) }
        adError.reason = reason
        return adError
    }
}
