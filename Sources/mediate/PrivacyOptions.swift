import AdMediation
import AdPrivacy
import ArgumentParser
import Foundation

/// `--gdpr`, `--tcf`, `--us-privacy`, `--gpp`, `--gpp-sid`, `--coppa`, `--under-age`, `--lmt`, `--att`: the privacy
/// signals every request of `load`, `compare`, `show` and `conformance` carries (each adapter forwards the ones its
/// network supports to the wire). The privacy rules apply on every path — the mediator's lines and a network asked
/// alone (`load --network`, `compare`'s per-network rows, `conformance`) alike: they may skip a network
/// (`privacy_blocked` with its reason) or strip identifiers.
struct PrivacyOptions: ParsableArguments {
    @Option(name: .long, help: "GDPR applies to the user: 1 or 0 (default: unknown, not sent).") var gdpr: Int?
    @Option(name: .long, help: "IAB TCF v2 consent string.") var tcf: String?
    @Option(name: .customLong("us-privacy"), help: "IAB US Privacy (CCPA) string, e.g. 1YNN.") var usPrivacy: String?
    @Option(name: .long, help: "IAB Global Privacy Platform string.") var gpp: String?
    @Option(name: .customLong("gpp-sid"), help: "GPP section ids that apply, comma-separated (e.g. 2,7).")
    var gppSID: String?
    @Flag(name: .long, help: "The app is directed to children (COPPA).") var coppa = false
    @Flag(name: .customLong("under-age"), help: "The user is under the age of consent.") var underAge = false
    @Flag(name: .long, help: "The user limited ad tracking (lmt).") var lmt = false
    @Option(
        name: .long,
        help: "Apple's App Tracking Transparency status: not-determined, restricted, denied or authorized.")
    var att: String?

    func validate() throws {
        if let gdpr, gdpr != 0, gdpr != 1 { throw ValidationError("--gdpr: 0 or 1, got \(gdpr)") }
        _ = try sectionIDs()
        if let att, Self.attStatus(att) == nil {
            throw ValidationError("--att: not-determined, restricted, denied or authorized, got \"\(att)\"")
        }
    }

    /// `--att`'s status.
    private static func attStatus(_ text: String) -> AppTrackingStatus? {
        switch text {
        case "not-determined": .notDetermined
        case "restricted": .restricted
        case "denied": .denied
        case "authorized": .authorized
        default: nil
        }
    }

    /// `--gpp-sid`'s ids; a bad list is a usage error naming the item.
    private func sectionIDs() throws -> [Int] {
        guard let gppSID else { return [] }
        return try gppSID.split(separator: ",", omittingEmptySubsequences: false).map { item in
            let text = item.trimmingCharacters(in: .whitespaces)
            guard let id = Int(text), id >= 0 else {
                throw ValidationError("--gpp-sid: comma-separated non-negative integers, got \"\(text)\"")
            }
            return id
        }
    }

    /// The privacy options given, as typed (`--gdpr 1`, `--tcf CPX…`): what a `privacy_blocked` hint names.
    var given: [String] {
        var given: [String] = []
        if let gdpr { given.append("--gdpr \(gdpr)") }
        for (name, value) in [("--tcf", tcf), ("--us-privacy", usPrivacy), ("--gpp", gpp), ("--gpp-sid", gppSID)] {
            if let value { given.append("\(name) \(value)") }
        }
        for (name, set) in [("--coppa", coppa), ("--under-age", underAge), ("--lmt", lmt)] where set {
            given.append(name)
        }
        if let att { given.append("--att \(att)") }
        return given
    }

    /// Whether any privacy option was given.
    var isSet: Bool {
        gdpr != nil || tcf != nil || usPrivacy != nil || gpp != nil || gppSID != nil || coppa || underAge || lmt
            || att != nil
    }

    /// The signals the options set (everything else "not set").
    var signals: PrivacySignals {
        var signals = PrivacySignals(
            gdprApplies: gdpr.map { $0 == 1 }, tcfConsent: tcf, usPrivacy: usPrivacy, gpp: gpp,
            gppSectionIDs: (try? sectionIDs()) ?? [], coppa: coppa, underAgeOfConsent: underAge)
        signals.limitAdTracking = lmt
        signals.appTracking = att.flatMap(Self.attStatus)
        return signals
    }
}
