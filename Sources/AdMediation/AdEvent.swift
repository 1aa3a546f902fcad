/// Something the user did with, or saw of, a loaded ad. Each event is reported at most once per ad.
public enum AdEvent: Hashable, Sendable, CustomStringConvertible {
    /// The ad was shown (counted when rendered on screen).
    case impression
    /// The user clicked the ad.
    case click
    /// A video started playing.
    case videoStart
    /// A video reached 25, 50 or 75 % of its length.
    case videoProgress(percent: Int)
    /// A video played to its end.
    case videoComplete
    /// The ad was closed or dismissed.
    case closed
    /// The user reported the ad for a reason (wire value of the network, e.g. `inappropriate`).
    case reported(reason: String)

    /// The snake_case name (`impression`, `video_progress`, …).
    public var name: String {
        switch self {
        case .impression: "impression"
        case .click: "click"
        case .videoStart: "video_start"
        case .videoProgress: "video_progress"
        case .videoComplete: "video_complete"
        case .closed: "ad_closed"
        case .reported: "report"
        }
    }

    /// `video_progress(50%)`, `report(spam)`, or the plain name.
    public var description: String {
        switch self {
        case .videoProgress(let pct): "video_progress(\(pct)%)"
        case .reported(let reason): "report(\(reason))"
        default: name
        }
    }
}

/// How far a reported event got.
public enum AdEventDelivery: Hashable, Sendable, CustomStringConvertible {
    /// The network's server accepted it.
    case delivered
    /// Stored (durably) and sent in the background; the server has not accepted it yet.
    case queued
    /// The network does not track this event: nothing was sent.
    case notSent
    /// Handed to the adapter, which does not say whether it reached the network (no built-in reporter answers this;
    /// kept for reporters that cannot tell).
    case reported
    /// It had been reported before: nothing was sent now.
    case alreadyReported

    /// `delivered`, `queued`, `not sent (the network does not track it)`, ….
    public var description: String {
        switch self {
        case .delivered: "delivered"
        case .queued: "queued"
        case .notSent: "not sent (the network does not track it)"
        case .reported: "reported (the adapter does not say whether it was delivered)"
        case .alreadyReported: "already reported"
        }
    }
}
