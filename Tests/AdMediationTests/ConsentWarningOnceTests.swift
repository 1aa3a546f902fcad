import AdMediationTesting
import Foundation
import TestSupport
import Testing

@testable import AdMediation

/// Issue 44: the consent store is read on every request, and a malformed stored signal was warned on every read. A
/// mediator now warns once per change of the malformed value (the warning still names the key, never the value).
@Suite("Consent store: a malformed signal is warned once per change", .timeLimit(.minutes(1)))
struct ConsentWarningOnceTests {
    /// A mediator over one filling network, reading `store`, logging into `capture`.
    func mediator(_ store: InMemoryConsentStore, _ capture: LogCapture) throws -> Mediator {
        var privacy = PrivacyConfiguration(consentStore: store)
        privacy.logger = capture.logger(label: "privacy")
        return try Mediator(
            networks: [ScriptedAdNetwork(id: "n", fallback: .fill())],
            configuration: .init(placements: ["p": placement([.init(network: "n", placement: "x")])]),
            privacy: privacy)
    }

    /// Loads `count` requests and releases their ads.
    func load(_ mediator: Mediator, times count: Int) async {
        for _ in 0..<count {
            let outcome = await mediator.loadWithTrace(interstitial)
            (try? outcome.result.get())?.ad?.invalidate()
        }
    }

    /// The store's warnings about `key` so far.
    func warnings(_ capture: LogCapture, key: String) -> Int {
        capture.all.filter { $0.level == .warning && $0.metadata["key"] == key }.count
    }

    @Test func aMalformedStoredSignalReadOnEveryRequestIsWarnedOnce() async throws {
        let capture = LogCapture()
        let store = InMemoryConsentStore(["IABUSPrivacy_String": .string("1yyn")])
        let mediator = try mediator(store, capture)
        await load(mediator, times: 5)
        #expect(warnings(capture, key: "IABUSPrivacy_String") == 1)
    }

    @Test func anotherMalformedValueOfTheSameKeyIsWarnedAgainOnce() async throws {
        let capture = LogCapture()
        let store = InMemoryConsentStore(["IABTCF_gdprApplies": .number(7)])
        let mediator = try mediator(store, capture)
        await load(mediator, times: 3)
        store.set(.number(9), forKey: "IABTCF_gdprApplies")
        await load(mediator, times: 3)
        #expect(warnings(capture, key: "IABTCF_gdprApplies") == 2)
    }

    @Test func aMalformedValueThatWasFixedAndBrokenAgainIsWarnedAgain() async throws {
        let capture = LogCapture()
        let store = InMemoryConsentStore(["IABGPP_GppSID": .string("2_x")])
        let mediator = try mediator(store, capture)
        await load(mediator, times: 2)
        store.set(.string("2_6"), forKey: "IABGPP_GppSID")
        await load(mediator, times: 2)
        store.set(.string("2_x"), forKey: "IABGPP_GppSID")
        await load(mediator, times: 2)
        #expect(warnings(capture, key: "IABGPP_GppSID") == 2)
    }

    @Test func theOnceOnlyWarningNamesTheKeyNeverTheValue() async throws {
        let capture = LogCapture()
        let store = InMemoryConsentStore(["IABTCF_TCString": .string("secret-not-a-tc-string")])
        let mediator = try mediator(store, capture)
        await load(mediator, times: 3)
        #expect(warnings(capture, key: "IABTCF_TCString") == 1)
        #expect(!capture.all.contains { "\($0.metadata) \($0.message)".contains("secret-not-a-tc-string") })
    }
}
