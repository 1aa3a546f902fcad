import AdMediation
import AdapterKit
import Foundation
import SandboxRouting

/// GrowthCat's event batches and reward validations.
extension GrowthCatRoutes {
    /// The event names the contract knows.
    static let eventNames: Set<String> = [
        "impression", "click", "video_start", "video_progress", "video_complete", "ad_closed", "ad_reported",
    ]

    /// How many reward validations' answers are kept for their retries.
    static let rewardAnswerLimit = 10_000

    /// `POST /v1/ads/events`: at most 100 events; each `sdk_event_id` is recorded once, a repeat counted as a
    /// duplicate.
    func events(_ body: Data) -> SandboxReply {
        guard let object = (try? JSONDecoder().decode(JSONValue.self, from: body))?.object else {
            return Self.error(400, "malformed_json", "the body is not a JSON object")
        }
        guard let items = object["events"]?.array else {
            return Self.error(400, "invalid_events", "events must be an array of objects")
        }
        let events = items.compactMap(\.object)
        guard events.count == items.count else {
            return Self.error(400, "invalid_events", "events must be an array of objects")
        }
        if events.isEmpty { return Self.error(400, "invalid_events", "events must not be empty") }
        if events.count > 100 {
            return Self.error(400, "batch_too_large", "a batch holds at most 100 events, got \(events.count)")
        }
        var parsed: [Event] = []
        for (index, event) in events.enumerated() {
            guard let id = event["sdk_event_id"]?.string, !id.isEmpty else {
                return Self.error(400, "invalid_event", "events[\(index)].sdk_event_id is required")
            }
            guard let name = event["event_name"]?.string, Self.eventNames.contains(name) else {
                return Self.error(400, "invalid_event", "events[\(index)].event_name is not a known event")
            }
            // Metadata values as text: a string as it is, any other value as its JSON.
            let metadata = (event["metadata"]?.object ?? [:]).mapValues { $0.string ?? $0.description }
            parsed.append(
                Event(
                    sdkEventID: id, eventName: name, placementKey: event["placement_key"]?.string,
                    creativeID: event["creative_id"]?.string, metadata: metadata))
        }
        let (accepted, duplicates) = state.withLock { m -> (Int, Int) in
            var accepted = 0, duplicates = 0
            m.records.batches += 1
            for event in parsed {
                if m.seenEventIDs.insert(event.sdkEventID).inserted {
                    m.records.events.append(event)
                    accepted += 1
                } else {
                    m.records.duplicates += 1
                    duplicates += 1
                }
            }
            return (accepted, duplicates)
        }
        return Self.json(202, ["accepted": .number(Double(accepted)), "duplicates": .number(Double(duplicates))])
    }

    /// `POST /v1/ads/reward/validate`: granted once per token, for a known user and at least the minimum view time;
    /// idempotent by `sdk_event_id`. The scenario's `validation_faults` (for the body's `placement_key`, drawn by the
    /// sandbox: ``SandboxReply/withRequestFault(placement:key:then:)``) may answer 503, reset, lose the answer or
    /// answer late — at most `max_validation_faults` times per validation.
    func reward(_ body: Data) -> SandboxReply {
        guard let object = (try? JSONDecoder().decode(JSONValue.self, from: body))?.object else {
            return Self.error(400, "malformed_json", "the body is not a JSON object")
        }
        guard let allocation = object["allocation_id"]?.string, let token = object["token"]?.string else {
            return Self.error(400, "invalid_request", "allocation_id and token are required")
        }
        let user = object["app_user_id"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        let viewed = object["viewed_seconds"]?.number ?? 0
        // Idempotent by `sdk_event_id`: a retry (the first answer lost, or late) gets the first answer again, so a
        // reward granted once is never refused to its own retry; a new id for a redeemed token is refused.
        let eventID = object["sdk_event_id"]?.string.flatMap { $0.isEmpty || $0.utf8.count > 128 ? nil : $0 }
        let request = RewardRequest(allocation: allocation, token: token, user: user, viewed: viewed, eventID: eventID)
        let placement = object["placement_key"]?.string
        return .withRequestFault(placement: placement, key: eventID ?? "token:" + token) { fault in
            validate(request, fault: fault)
        }
    }

    /// A reward validation's fields, read from its body.
    struct RewardRequest: Sendable {
        var allocation: String
        var token: String
        var user: String?
        var viewed: Double
        var eventID: String?
    }

    /// One attempt of a validation, with the fault the sandbox drew for it (nil: none).
    private func validate(_ request: RewardRequest, fault: SandboxRequestFault?) -> SandboxReply {
        if let fault {
            state.withLock { $0.records.rewardValidationFaults[fault.kind, default: 0] += 1 }
            switch fault.kind {
            case "status":
                let status = (100...599).contains(fault.status) ? fault.status : 503
                return Self.error(status, "injected_fault", "injected status \(status)")
            case "reset":
                return .reset
            default:
                break
            }
        }
        let processedFault = fault.flatMap { ["lost_answer", "late_answer"].contains($0.kind) ? $0.kind : nil }
        let reward: (name: String, amount: Int)? = state.withLock { m in
            let replayed: Bool
            var granted: (name: String, amount: Int)?
            if let eventID = request.eventID, let first = m.rewardAnswers[eventID] {
                granted = first
                replayed = true
            } else {
                replayed = false
                if var issued = m.tokens[request.allocation], issued.token == request.token, !issued.redeemed,
                    request.user != nil, request.viewed >= issued.minimumViewSeconds, let name = issued.rewardName,
                    let amount = issued.rewardAmount
                {
                    issued.redeemed = true
                    m.tokens[request.allocation] = issued
                    granted = (name, amount)
                }
                if let eventID = request.eventID {
                    m.rewardAnswers[eventID] = .some(granted)
                    m.rewardAnswerOrder.append(eventID)
                    if m.rewardAnswerOrder.count > Self.rewardAnswerLimit {
                        m.rewardAnswers[m.rewardAnswerOrder.removeFirst()] = nil
                    }
                }
            }
            m.records.rewardValidations.append(
                RewardValidation(
                    allocationID: request.allocation, appUserID: request.user, viewedSeconds: request.viewed,
                    validated: granted != nil, sdkEventID: request.eventID, replayed: replayed,
                    fault: processedFault))
            return granted
        }
        let answer: SandboxReply
        if let (name, amount) = reward {
            answer = Self.json(
                200,
                [
                    "reward_validated": true, "accepted": 1,
                    "reward": ["name": .string(name), "amount": .number(Double(amount))],
                ])
        } else {
            answer = Self.json(200, ["reward_validated": false, "accepted": 0, "reward": .null])
        }
        switch processedFault {
        case "lost_answer": return .reset
        case "late_answer": return .delayed(fault?.delay ?? .zero, answer)
        default: return answer
        }
    }
}
