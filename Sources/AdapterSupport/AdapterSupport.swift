import AdMediation
import AdTransport
import AdapterKit
import Foundation

/// The privacy signals as the query-string and JSON contracts carry them (`gdpr`, `gdpr_consent`, `us_privacy`,
/// `gpp`, `gpp_sid`, `coppa`, and `tfua` where the contract has it), written once for every adapter.
package enum WirePrivacy {
    /// How a contract carries "under the age of consent".
    package enum UnderAge: Sendable {
        /// As its own `tfua=1` (AdMob's "tag for under age of consent").
        case tfua
        /// Folded into `coppa=1` (contracts without a separate flag).
        case coppa
    }

    /// One field's value.
    package enum Value: Sendable, Equatable {
        /// A number (`gdpr`, `coppa`, `tfua`).
        case int(Int)
        /// A string (`gdpr_consent`, `us_privacy`, `gpp`).
        case string(String)
        /// A list of section ids (`gpp_sid`).
        case ints([Int])

        /// The value in a query string (`gpp_sid` comma-separated).
        package var queryText: String {
            switch self {
            case .int(let value): String(value)
            case .string(let text): text
            case .ints(let values): values.map(String.init).joined(separator: ",")
            }
        }

        /// The value in a JSON object.
        package var json: Any {
            switch self {
            case .int(let value): value
            case .string(let text): text
            case .ints(let values): values
            }
        }
    }

    /// The fields `privacy` sets, in a stable order; absent signals are left out.
    package static func fields(_ privacy: PrivacySignals, underAge: UnderAge) -> [(key: String, value: Value)] {
        var fields: [(key: String, value: Value)] = []
        if let gdpr = privacy.gdprApplies { fields.append(("gdpr", .int(gdpr ? 1 : 0))) }
        if let tcf = privacy.tcfConsent { fields.append(("gdpr_consent", .string(tcf))) }
        if let usp = privacy.usPrivacy { fields.append(("us_privacy", .string(usp))) }
        if let gpp = privacy.gpp { fields.append(("gpp", .string(gpp))) }
        if !privacy.gppSectionIDs.isEmpty { fields.append(("gpp_sid", .ints(privacy.gppSectionIDs))) }
        switch underAge {
        case .tfua:
            if privacy.coppa { fields.append(("coppa", .int(1))) }
            if privacy.underAgeOfConsent { fields.append(("tfua", .int(1))) }
        case .coppa:
            if privacy.coppa || privacy.underAgeOfConsent { fields.append(("coppa", .int(1))) }
        }
        return fields
    }

    /// The fields as query items.
    package static func query(_ privacy: PrivacySignals, underAge: UnderAge) -> [(String, String)] {
        fields(privacy, underAge: underAge).map { ($0.key, $0.value.queryText) }
    }

    /// The fields as a JSON object (empty when no signal is set).
    package static func json(_ privacy: PrivacySignals, underAge: UnderAge) -> [String: Any] {
        var object: [String: Any] = [:]
        for field in fields(privacy, underAge: underAge) { object[field.key] = field.value.json }
        return object
    }
}

/// Query strings, written once: every value is percent-encoded except RFC 3986's unreserved characters, so `&`, `=`,
/// `+`, `?`, `/`, `#` and spaces in a value can never change the query's meaning.
package enum QueryString {
    private static let unreserved: CharacterSet = {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        return allowed
    }()

    /// `text` with everything but unreserved characters percent-encoded.
    package static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// `a=1&b=x%20y`.
    package static func encode(_ items: [(String, String)]) -> String {
        items.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }

    /// `text` in `application/x-www-form-urlencoded` form, as the WHATWG URL standard (and Rust's `url` crate) writes
    /// it: ASCII letters, digits and `-._*` kept, a space as `+`, everything else percent-encoded. For contracts
    /// that append to URLs the way their reference client does (MARS callbacks).
    package static func formEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "*"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "): out += "+"
            default: out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// `a=1&b=x+y`, form-encoded.
    package static func formEncode(_ items: [(String, String)]) -> String {
        items.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
    }
}

/// Prices from a server, written once.
package enum WirePrice {
    /// `value` when it is a finite eCPM of 0…1 000 000; otherwise nil (the fill is then unpriced, never trapped on).
    package static func ecpm(_ value: Double?) -> Double? {
        guard let value, value.isFinite, value >= 0, value <= 1_000_000 else { return nil }
        return value
    }
}

/// Fires a served ad's impression and click tracking URLs through the network's bounded ``BackgroundSender`` (each
/// impression once and each click per tap: ``LoadedAd`` decides), sent the adapter's way (which may sign requests).
///
/// What the user saw is local truth: the event is recorded as ``AdEventDelivery/queued`` at once and the ping is
/// retried with back-off within the sender's bound in the background, so a slow or failing tracker never holds the
/// app's callback, never turns a click into an error and never blocks the clicks after a failed impression ping.
package struct TrackingReporter: AdEventReporter {
    /// Sends one request the adapter's way.
    package typealias Send = BackgroundSender.Send

    let send: Send
    let sender: BackgroundSender
    let impression: String
    let click: String
    /// The network's destination policy: each ping's request carries it (``HTTPRequest/destination``).
    let policy: DestinationPolicy
    /// Fired once the impression ping was attempted (or dropped): click pings wait for it, so the tracker sees the
    /// impression first whatever the sender's concurrency.
    let impressionAttempted = OnceSignal()

    /// A reporter for the two URLs (already checked against `policy`), queued on `sender` and sent with `send`.
    package init(
        impression: String, click: String, policy: DestinationPolicy, sender: BackgroundSender,
        send: @escaping Send
    ) {
        self.send = send
        self.sender = sender
        self.impression = impression
        self.click = click
        self.policy = policy
    }

    /// A reporter sending through `http`.
    package init(
        impression: String, click: String, policy: DestinationPolicy, sender: BackgroundSender, http: any HTTPClient
    ) {
        self.init(impression: impression, click: click, policy: policy, sender: sender) { try await http.send($0) }
    }

    /// Queues the impression or click URL (``AdEventDelivery/queued``); any other event is
    /// ``AdEventDelivery/notSent``: these contracts do not track it. Throws only when the sender's queue is full or
    /// the network was shut down (nothing will ever send it).
    package func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
        let url: String
        let through: Send
        switch record.event {
        case .impression:
            url = impression
            let (send, attempted) = (send, impressionAttempted)
            through = { request in
                defer { attempted.fire() }
                return try await send(request)
            }
        case .click:
            url = click
            let (send, attempted) = (send, impressionAttempted)
            through = { request in
                await attempted.wait()
                return try await send(request)
            }
        default: return .notSent
        }
        let queued = sender.send(url, meeting: DestinationRule(policy: policy, kind: .tracking), through: through)
        if record.event == .impression && !queued { impressionAttempted.fire() }
        guard queued else {
            throw AdError(.network, "tracking \(record.event) was dropped: the tracking queue is full or shut down")
        }
        return .queued
    }
}
