import AdMediationTesting
import AdPrivacy
import Testing

@testable import AdMediation

/// Issue 44 ("malformed signals fail open"): a US Privacy string in lower case, with a stray space or of the wrong
/// length let the advertising id and the user id out where the same opt-out well formed strips them, and an invalid
/// US Privacy string hid a valid GPP section 6 opt-out. A signal the app gives that does not decode fails closed —
/// bare (the rules' verdict), through a Mediator and through a nested one (what reaches the network).
@Suite("Privacy signals that do not decode fail closed")
struct FailClosedPrivacyTests {
    static let malformed = ["1yyn", " 1YYN", "1YY", "1YYNN", "1Y?N"]

    @Test(arguments: malformed)
    func anUnreadableUSPrivacyStringStripsEveryIdentifier(text: String) {
        let verdict = PrivacyRules.verdict(DecodedPrivacy(PrivacySignals(usPrivacy: text)), tcfVendorID: nil)
        #expect(verdict.mayBeAsked)
        #expect(verdict.permissions == .none, "\(text): \(verdict.reasons)")
        #expect(verdict.reasons.contains { $0.hasPrefix("invalid us_privacy \"") })
    }

    @Test func aWellFormedStringThatDoesNotOptOutKeepsTheIdentifiers() {
        let verdict = PrivacyRules.verdict(DecodedPrivacy(PrivacySignals(usPrivacy: "1YNN")), tcfVendorID: nil)
        #expect(verdict.permissions == .all)
    }

    @Test func anUnreadableGPPStringStripsEveryIdentifier() {
        let verdict = PrivacyRules.verdict(
            DecodedPrivacy(PrivacySignals(gpp: "not a gpp string", gppSectionIDs: [7])), tcfVendorID: nil)
        #expect(verdict.permissions == .none, "\(verdict.reasons)")
    }

    /// Through a Mediator and a nested one: the network that is asked gets no user id.
    @Test(arguments: [false, true])
    func theNetworkBehindAMediatorGetsNoUserIDForAnUnreadableString(nested: Bool) async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill())
        var mediator = try Mediator(
            id: "inner", networks: [network],
            configuration: .init(placements: ["p": placement([.init(network: "n", placement: "n1")])]), clock: clock)
        if nested {
            mediator = try Mediator(
                id: "outer", networks: [mediator],
                configuration: .init(placements: ["p": placement([.init(network: "inner", placement: "p")])]),
                clock: clock)
        }
        _ = try await mediator.load("p", userID: "account-7", privacy: PrivacySignals(usPrivacy: "1yyn"))
        let sent = try #require(network.requests.last)
        #expect(sent.userID == nil)
        #expect(sent.privacy.effectivePermissions == .none)
    }
}
