import AdapterKit
import Foundation

/// The request bodies GrowthCat writes (specs/growthcat.md): typed, encoded with sorted keys.
extension GrowthCatClient {
    /// One ad event as it is queued and sent (`POST /v1/ads/events`, inside `events`).
    struct EventBody: Encodable {
        let sdkEventID: String
        let eventName: String
        let occurredAt: String
        let campaignID: String
        let creativeID: String
        let allocationID: String
        let token: String
        let placementKey: String?
        let format: String?
        let appUserID: String?
        let sessionID: String?
        let metadata: [String: String]?

        enum CodingKeys: String, CodingKey {
            case token, format, metadata
            case sdkEventID = "sdk_event_id"
            case eventName = "event_name"
            case occurredAt = "occurred_at"
            case campaignID = "campaign_id"
            case creativeID = "creative_id"
            case allocationID = "allocation_id"
            case placementKey = "placement_key"
            case appUserID = "app_user_id"
            case sessionID = "session_id"
        }
    }

    /// A reward's validation (`POST /v1/ads/reward/validate`).
    struct RewardBody: Encodable {
        let allocationID: String
        let token: String
        let creativeID: String
        let appUserID: String
        let viewedSeconds: Int
        let completed: Bool
        let sdkEventID: String
        let placementKey: String?
        let sessionID: String?

        enum CodingKeys: String, CodingKey {
            case token, completed
            case allocationID = "allocation_id"
            case creativeID = "creative_id"
            case appUserID = "app_user_id"
            case viewedSeconds = "viewed_seconds"
            case sdkEventID = "sdk_event_id"
            case placementKey = "placement_key"
            case sessionID = "session_id"
        }
    }

    /// `body` as JSON with sorted keys; empty only if it cannot be encoded (these bodies hold strings, integers and
    /// booleans, which always can).
    static func wireJSON(_ body: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(body)) ?? Data()
    }

    /// Whether a queued event's payload is a JSON object (a row that is not is unreadable and never sent).
    static func isJSONObject(_ payload: Data) -> Bool {
        (try? JSONDecoder().decode(JSONValue.self, from: payload))?.object != nil
    }

    /// The batch body `{"events":[…]}` around the queued payloads, each sent as it was stored.
    static func batchBody(_ events: [Data]) -> Data {
        var body = Data(#"{"events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(event)
        }
        body.append(contentsOf: Array("]}".utf8))
        return body
    }
}
