import AdMediation
import Foundation

/// `mediate show --json` as one typed value: the ad shown, each event with what became of it, the reward, and a
/// delivery that did not finish.
struct ShowReport: Encodable, Sendable {
    var placement: String
    var network: String
    var adID: String
    var events: [Event]
    /// A rewarded ad's reward (granted, refused, or not earned); nil for other formats.
    var reward: Reward?
    /// Why the events' delivery did not finish, when it did not.
    var deliveryError: String?

    /// Seconds on the presentation's clock.
    static func seconds(_ at: AdInstant) -> Double { Double(at.nanoseconds) / 1e9 }

    /// What `ad`'s presentation `shown` logged, as the report says it.
    init(placement: String, ad: LoadedAd, shown: FullScreenResult) {
        self.placement = placement
        network = ad.networkID
        adID = ad.creative.id
        events = []
        for entry in shown.log {
            let at = Self.seconds(entry.at)
            switch entry.kind {
            case .event(let event, let delivery):
                // "sent" only once the server accepted it: queued (503/429, offline) is not sent, and an event the
                // network does not track is never sent.
                events.append(
                    Event(
                        at: at, event: event.description, sent: delivery == .delivered,
                        delivery: Show.name(of: delivery)))
            case .eventFailed(let event, let error):
                events.append(
                    Event(at: at, event: event.description, sent: false, delivery: "failed", error: "\(error)"))
            case .playbackFailed(let reason):
                events.append(Event(at: at, event: "playback failed", sent: false, error: reason))
            case .closeRefused(let availableAt):
                let when = availableAt.map { "\(Self.seconds($0)) s" } ?? "the end"
                events.append(
                    Event(at: at, event: "close refused", sent: false, error: "the close button appears at \(when)"))
            case .dismissed:
                events.append(Event(at: at, event: "dismissed", sent: false))
            case .rewardGranted(let granted):
                reward = Reward(validated: true, name: granted.name, amount: granted.amount, at: at)
            case .rewardRefused:
                reward = Reward(validated: false, error: "the server refused it", at: at)
            case .rewardFailed(let error):
                reward = Reward(validated: false, error: "\(error)", at: at)
            case .finishFailed(let error):
                deliveryError = "\(error)"
            }
        }
        if reward == nil && ad.format == .rewarded {
            reward = Reward(validated: false, error: "the ad was not watched long enough to be closed")
        }
    }

    enum CodingKeys: String, CodingKey {
        case placement, filled, network, events, reward
        case adID = "ad_id"
        case deliveryError = "delivery_error"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(placement, forKey: .placement)
        try container.encode(true, forKey: .filled)
        try container.encode(network, forKey: .network)
        try container.encode(adID, forKey: .adID)
        try container.encode(events, forKey: .events)
        try container.encode(reward, forKey: .reward)
        try container.encode(deliveryError, forKey: .deliveryError)
    }

    /// One log entry: `{"at_s", "event", "sent", "delivery", "error"}` (`delivery` only for an event delivered or
    /// not; `error` null when there was none).
    struct Event: Encodable, Sendable {
        var at: Double
        var event: String
        var sent: Bool
        var delivery: String? = nil
        var error: String? = nil

        enum CodingKeys: String, CodingKey {
            case event, sent, delivery, error
            case at = "at_s"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(at, forKey: .at)
            try container.encode(event, forKey: .event)
            try container.encode(sent, forKey: .sent)
            try container.encodeIfPresent(delivery, forKey: .delivery)
            try container.encode(error, forKey: .error)
        }
    }

    /// `{"validated", "name", "amount", "error", "at_s"}`, each but `validated` only when known.
    struct Reward: Encodable, Sendable {
        var validated: Bool
        var name: String? = nil
        var amount: Double? = nil
        var error: String? = nil
        var at: Double? = nil

        /// `validated, 10.0 coins` or `not granted (the server refused it)`.
        var text: String {
            validated
                ? "validated, \(amount.map { "\($0)" } ?? "") \(name ?? "")"
                : "not granted (\(error ?? "the server refused it"))"
        }

        enum CodingKeys: String, CodingKey {
            case validated, name, amount, error
            case at = "at_s"
        }
    }

    /// Nothing was shown: `{"placement", "filled": false, "events": [], "privacy_blocked": [...]}` with the lines the
    /// privacy rules blocked.
    struct Nothing: Encodable, Sendable {
        var placement: String
        var blocked: [String]

        enum CodingKeys: String, CodingKey {
            case placement, filled, events
            case blocked = "privacy_blocked"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(placement, forKey: .placement)
            try container.encode(false, forKey: .filled)
            try container.encode([Event](), forKey: .events)
            try container.encode(blocked, forKey: .blocked)
        }
    }
}
