/// Frequency cap and pacing of one placement.
struct PlacementPacing: Sendable {
    var impressions: [AdInstant] = []

    /// Why a request at `now` may not be served, if it may not.
    func block(at now: AdInstant, cap: Int?, window: Duration, minInterval: Duration?) -> SkipReason? {
        if let minInterval, let last = impressions.last, now - last < minInterval { return .paced }
        if let cap {
            let since = now - window
            if impressions.count(where: { $0 > since }) >= cap { return .capped }
        }
        return nil
    }

    /// Records an impression. Only what a decision can still need is kept: impressions inside `window`, and of
    /// those at most `cap` (the newest decide) — at least one, for the minimum interval.
    mutating func record(_ instant: AdInstant, window: Duration, cap: Int?) {
        impressions.append(instant)
        let since = instant - window
        impressions.removeAll { $0 <= since }
        let keep = max(cap ?? 1, 1)
        if impressions.count > keep { impressions.removeFirst(impressions.count - keep) }
    }
}
