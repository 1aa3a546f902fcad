import AdMediation

/// ``GrowthCatPresentation`` as the core's ``FullScreenRules``: the events it decides go out through the ad's own
/// reporter (the durable queue), the reward is validated with `POST /v1/ads/reward/validate` for the request's user,
/// and the queue is flushed when the presentation ends.
struct GrowthCatFullScreenRules: FullScreenRules {
    let ad: GrowthCatAd
    let client: GrowthCatClient
    let userID: String?
    let sessionID: String?
    private var presentation: GrowthCatPresentation?

    init(ad: GrowthCatAd, client: GrowthCatClient, userID: String?, sessionID: String?) {
        self.ad = ad
        self.client = client
        self.userID = userID
        self.sessionID = sessionID
    }

    var showsSponsoredLabel: Bool { true }
    var closeAvailableAt: AdInstant? { presentation?.closeAvailableAt }

    mutating func start(at now: AdInstant) -> [AdEvent] {
        let (presentation, events) = GrowthCatPresentation.present(ad, at: now)
        self.presentation = presentation
        return events.map(\.adEvent)
    }

    mutating func advance(to now: AdInstant) -> [AdEvent] { presentation?.advance(to: now).map(\.adEvent) ?? [] }

    mutating func playbackEnded(at now: AdInstant) -> [AdEvent] {
        presentation?.playbackEnded(at: now).map(\.adEvent) ?? []
    }

    mutating func click(at now: AdInstant) -> [AdEvent] { presentation?.click().map(\.adEvent) ?? [] }

    mutating func close(at now: AdInstant) -> FullScreenClose {
        guard let (result, events) = presentation?.close(at: now) else { return .closed(events: [], claim: nil) }
        switch result {
        case .notYet(let availableAt): return .refused(availableAt: availableAt)
        case .closed(let figures): return .closed(events: events.map(\.adEvent), claim: figures.map(Self.claim))
        }
    }

    mutating func dismissed(at now: AdInstant) -> [AdEvent] {
        // The same events as a close, whatever the close button's state; no reward is handed out for it.
        guard var presentation, !presentation.isClosed else { return [] }
        let events = presentation.dismiss(at: now)
        self.presentation = presentation
        return events.map(\.adEvent)
    }

    mutating func rewardClaim(at now: AdInstant) -> RewardClaim? {
        presentation?.rewardValidation(at: now).map(Self.claim)
    }

    func nextChange(after now: AdInstant) -> AdInstant? { presentation?.nextChange(after: now) }

    func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward? {
        guard let userID else {
            throw AdError(.configuration, "a rewarded GrowthCat ad needs the request's userID to validate its reward")
        }
        let answer = try await client.validateAdReward(
            for: ad, appUserID: userID, sessionID: sessionID, viewedSeconds: claim.viewed.seconds,
            completed: claim.completed)
        guard answer.rewardValidated, let reward = answer.reward else { return nil }
        return AdReward(name: reward.name, amount: reward.amount)
    }

    func finish() async throws(AdError) {
        let report = await client.flushAdEvents()
        if report.remaining > 0 {
            throw AdError(
                .network, "\(report.remaining) GrowthCat events still queued; they are sent on the next flush")
        }
    }

    static func claim(_ figures: (viewedSeconds: Double, completed: Bool)) -> RewardClaim {
        RewardClaim(viewed: GrowthCatPresentation.seconds(figures.viewedSeconds), completed: figures.completed)
    }
}

extension GrowthCatPresentation.Event {
    /// The core's event for this one (`video_progress` carries its `progress_pct`).
    var adEvent: AdEvent {
        switch name {
        case .impression: .impression
        case .click: .click
        case .videoStart: .videoStart
        case .videoProgress:
            .videoProgress(percent: OutsideValue.integer(metadata["progress_pct"] ?? "", in: 0...100) ?? 0)
        case .videoComplete: .videoComplete
        case .adClosed: .closed
        case .adReported: .reported(reason: metadata["reason"] ?? "")
        }
    }
}
