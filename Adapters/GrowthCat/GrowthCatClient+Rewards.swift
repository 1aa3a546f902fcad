import AdMediation
import AdStorage
import AdapterKit
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// One attempt of a request the client retried: its HTTP status, or the error code when there was no answer.
public struct GrowthCatRequestAttempt: Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status, nil when the attempt got no answer.
    public var status: Int?
    /// The error's code name (`timeout`, `network`) when the attempt got no answer.
    public var error: String?
    /// When the attempt ended, from the start of the first one.
    public var at: Duration

    /// `503 at 1000 ms`, `timeout at 3000 ms`.
    public var description: String {
        "\(status.map(String.init) ?? error ?? "?") at \(Int(at.milliseconds.rounded())) ms"
    }
}

/// Server-side reward validation.
extension GrowthCatClient {
    // MARK: Rewards

    /// Validates a reward with the server. Grant it only when the answer says `rewardValidated`.
    ///
    /// A 5xx answer, a timeout, or an answer lost after the connection was made (a reset, a close without an answer,
    /// a cut body) is retried with exponential back-off (the seed's status table: at most `maxServerRetries`
    /// retries), with the same `sdk_event_id` — the server answers a repeated id with its first answer (the project's
    /// GrowthCat contract; the demand sandbox implements it), so a retry after a lost or late answer never turns a
    /// granted reward into a refusal — within `timeout` (default `Configuration.rewardValidationTimeout`: the user
    /// waits on the close screen); each attempt is in the answer's ``AdRewardValidationResponse/attempts``. The
    /// network unavailable (no connection: refused, unreachable, no such host) throws at once (the seed: "does not
    /// grant the reward and does not retry silently"), and nothing is stored for later. `appUserID` is required.
    /// `viewedSeconds` is whole seconds, as the seed's `viewedSeconds: Int` (an integer on the wire; a presentation
    /// rounds its elapsed time down).
    ///
    /// Once the server has answered, the ad's token is spent: later loads never hand out an ad with that token
    /// again (the server refuses a redeemed token), so the next rewarded view gets a fresh one.
    public func validateAdReward(
        for ad: GrowthCatAd, appUserID: String, sessionID: String?, viewedSeconds: Int,
        completed: Bool, timeout: Duration? = nil
    ) async throws(AdError) -> AdRewardValidationResponse {
        guard !appUserID.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw AdError(.configuration, "appUserID is required to validate a reward")
        }
        let body = RewardBody(
            allocationID: ad.allocationID, token: ad.token, creativeID: ad.creativeID, appUserID: appUserID,
            viewedSeconds: max(0, viewedSeconds), completed: completed, sdkEventID: RandomID.uuidString(),
            placementKey: ad.placement?.key, sessionID: sessionID)
        let data = Self.wireJSON(body)
        let deadline = clock.now + (timeout ?? configuration.rewardValidationTimeout)
        let (response, attempts) = try await requestRetrying(
            .post, "/v1/ads/reward/validate", body: data, deadline: deadline, retryLostAnswers: true)
        guard response.isSuccess else {
            let error = Self.statusError(response, "POST /v1/ads/reward/validate")
            throw AdError(error.code, "\(error.message) \(Self.summary(attempts))")
        }
        spendRewardToken(ad.token)
        var answer = try Self.parseRewardAnswer(response.body)
        answer.attempts = attempts
        return answer
    }

    /// Forgets every cached catalog holding an ad with `token` (the next load fetches fresh tokens), and refuses
    /// the token in catalogs already on their way.
    func spendRewardToken(_ token: String) {
        if spentRewardTokens.count >= 4096 { spentRewardTokens.removeAll() }  // bounded; cached copies are gone
        spentRewardTokens.insert(token)
        for (key, entry) in catalogCache where entry.ads.contains(where: { $0.token == token }) {
            catalogCache.removeValue(forKey: key)
        }
    }
}
