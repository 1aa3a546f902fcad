import AdMediation
import AdStorage
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// Server-side reward validation.
extension GrowthCatClient {
    // MARK: Rewards

    /// Validates a reward with the server. Grant it only when the answer says `rewardValidated`. Offline or any
    /// error throws, and nothing is stored for later. `appUserID` is required.
    public func validateAdReward(
        for ad: GrowthCatAd, appUserID: String, sessionID: String?, viewedSeconds: Double,
        completed: Bool
    ) async throws(AdError) -> AdRewardValidationResponse {
        guard !appUserID.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw AdError(.configuration, "appUserID is required to validate a reward")
        }
        var body: [String: Any] = [
            "allocation_id": ad.allocationID, "token": ad.token, "creative_id": ad.creativeID, "app_user_id": appUserID,
            "viewed_seconds": viewedSeconds, "completed": completed, "sdk_event_id": RandomID.uuidString(),
        ]
        if let key = ad.placement?.key { body["placement_key"] = key }
        if let sessionID { body["session_id"] = sessionID }
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        let response = try await request(.post, "/v1/ads/reward/validate", body: data)
        guard response.isSuccess else { throw Self.statusError(response, "POST /v1/ads/reward/validate") }
        return try Self.parseRewardAnswer(response.body)
    }
}
