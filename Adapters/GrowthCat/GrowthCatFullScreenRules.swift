import AdMediation

/// GrowthCat's rules as the core's ``FullScreenRules``: the seed's contract (``GrowthCatPresentation/contract(for:)``)
/// for the core's ledger, whose events go out through the ad's own reporter (the durable queue); the reward is
/// validated with `POST /v1/ads/reward/validate` for the app's account id (``AdRequest/rewardUserID``, else its
/// `userID`, whatever the privacy rules decide for ad requests and events), and the queue is flushed when the
/// presentation ends.
struct GrowthCatFullScreenRules: FullScreenRules {
    let ad: GrowthCatAd
    let client: GrowthCatClient
    let userID: String?
    let sessionID: String?

    init(ad: GrowthCatAd, client: GrowthCatClient, userID: String?, sessionID: String?) {
        self.ad = ad
        self.client = client
        self.userID = userID
        self.sessionID = sessionID
    }

    var showsSponsoredLabel: Bool { true }
    /// The seed's rules for this ad (``GrowthCatPresentation/contract(for:)``); the core's ledger applies them.
    var contract: FullScreenContract { GrowthCatPresentation.contract(for: ad) }

    func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward? {
        guard let userID else {
            throw AdError(
                .configuration,
                "a rewarded GrowthCat ad needs the request's userID (or rewardUserID) to validate its reward")
        }
        let answer = try await client.validateAdReward(
            for: ad, appUserID: userID, sessionID: sessionID, viewedSeconds: Self.wholeSeconds(claim.viewed),
            completed: claim.completed)
        guard answer.rewardValidated, let reward = answer.reward else { return nil }
        return AdReward(name: reward.name, amount: reward.amount)
    }

    /// One flush (it never sleeps: a 5xx or 429 hands the queue to the client's delivery loop). Returns only when the
    /// server accepted everything queued.
    func finish() async throws(AdError) {
        let report = await client.flushAdEvents()
        if report.dropped > 0 {
            throw AdError(
                .network, "\(report.dropped) GrowthCat events were refused by the server (400/403) and dropped")
        }
        if report.remaining > 0 {
            throw AdError(
                .network,
                "\(report.remaining) GrowthCat events still queued (not lost): the client's delivery loop sends them")
        }
    }

    /// The seed's `viewedSeconds: Int`: whole seconds, rounded down (2.9 s on the ad is 2), never negative.
    static func wholeSeconds(_ viewed: Duration) -> Int {
        Int(clamping: max(0, viewed.components.seconds))
    }

    static func claim(_ figures: (viewedSeconds: Double, completed: Bool)) -> RewardClaim {
        RewardClaim(viewed: GrowthCatPresentation.seconds(figures.viewedSeconds), completed: figures.completed)
    }
}
