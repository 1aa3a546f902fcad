import AdMediationTesting
import AdPrivacy
import Foundation
import TestSupport
import Testing

@testable import AdMediation

/// Consent read from the IAB's storage keys and enforced by the mediator before every adapter call.
@Suite("Consent store and enforcement", .timeLimit(.minutes(1)))
struct ConsentEnforcementTests {
    /// A TC string consenting every purpose (1…10) and special feature 1, for `vendors`.
    static func consenting(vendors: Set<Int> = [755]) -> String {
        var tcf = TCFTestString()
        tcf.purposeConsents = Set(1...10)
        tcf.vendorConsents = vendors
        tcf.specialFeatureOptIns = [1]
        return tcf.encoded
    }

    @Test("the IAB keys of a store become the request's privacy signals")
    func storeKeysBecomeSignals() {
        let tcf = Self.consenting()
        let store = InMemoryConsentStore([
            "IABTCF_gdprApplies": .number(1), "IABTCF_TCString": .string(tcf),
            "IABGPP_HDR_GppString": .string("DBABzw~1YNN~BVVqAAEABCA.QA"), "IABGPP_GppSID": .string("6_7"),
            "IABUSPrivacy_String": .string("1YNN"),
        ])
        let signals = PrivacySignals(store: store)
        #expect(signals.gdprApplies == true)
        #expect(signals.tcfConsent == tcf)
        #expect(signals.gpp == "DBABzw~1YNN~BVVqAAEABCA.QA")
        #expect(signals.gppSectionIDs == [6, 7])
        #expect(signals.usPrivacy == "1YNN")
    }

    @Test("malformed stored values are ignored (an undecodable consent string kept), warned by key, never the value")
    func malformedStoredValuesAreIgnored() {
        let capture = LogCapture()
        let store = InMemoryConsentStore([
            "IABTCF_gdprApplies": .number(7), "IABTCF_TCString": .string("secret-not-a-tc-string"),
            "IABGPP_HDR_GppString": .number(3), "IABGPP_GppSID": .string("2_x"),
            "IABUSPrivacy_String": .unreadable("Date"),
        ])
        let signals = PrivacySignals(store: store, logger: capture.logger(label: "t"))
        // Kept: an unreadable TC string is read as no consent (fail closed), where dropping it would be no signal.
        #expect(signals == PrivacySignals(tcfConsent: "secret-not-a-tc-string"))
        let keys = capture.all.filter { $0.level == .warning }.compactMap { $0.metadata["key"] }
        #expect(
            Set(keys) == [
                "IABTCF_gdprApplies", "IABTCF_TCString", "IABGPP_HDR_GppString", "IABGPP_GppSID",
                "IABUSPrivacy_String",
            ])
        #expect(!capture.all.contains { "\($0.metadata)".contains("secret-not-a-tc-string") })
    }

    @Test("a UserDefaults suite is a consent store: strings and integers read, other types unreadable")
    func userDefaultsStore() throws {
        let suite = "admediation.consent.test.\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        defaults.set(1, forKey: "IABTCF_gdprApplies")
        defaults.set("1YNN", forKey: "IABUSPrivacy_String")
        defaults.set(2.5, forKey: "IABTCF_CmpSdkID")
        let store = try #require(UserDefaultsConsentStore(suiteName: suite))
        #expect(store.consentValue(forKey: "IABTCF_gdprApplies") == .number(1))
        #expect(store.consentValue(forKey: "IABUSPrivacy_String") == .string("1YNN"))
        #expect(store.consentValue(forKey: "IABTCF_TCString") == nil)
        if case .unreadable = store.consentValue(forKey: "IABTCF_CmpSdkID") {} else { Issue.record("2.5 was read") }
    }

    @Test("the mediator reads the store on every request: consent withdrawn later blocks the next request")
    func storeIsReadOnEveryRequest() async throws {
        let net = ScriptedAdNetwork(id: "n", fallback: .fill())
        let store = InMemoryConsentStore([
            "IABTCF_gdprApplies": .number(1), "IABTCF_TCString": .string(Self.consenting()),
        ])
        let mediator = try Mediator(
            networks: [net], configuration: .init(placements: ["p": placement([.init(network: "n", placement: "x")])]),
            privacy: PrivacyConfiguration(consentStore: store, tcfVendorIDs: ["n": 755]))
        let first = await mediator.loadWithTrace(interstitial)
        #expect(first.trace.lines[0].outcome == .fill)
        (try first.result.get()).ad?.invalidate()
        store.set(.string(TCFTestString().encoded), forKey: "IABTCF_TCString")  // everything refused
        let second = await mediator.loadWithTrace(interstitial)
        #expect(second.trace.lines[0].outcome == .skipped(.privacyBlocked))
        #expect(second.trace.lines[0].privacyReason == "tcf purpose 1 not consented for vendor 755")
        #expect(net.requests.count == 1, "the blocked network was never asked")
    }

    @Test("a vendor without consent is skipped with the reason in the trace; the next line is asked")
    func vendorWithoutConsentIsSkipped() async throws {
        let blocked = ScriptedAdNetwork(id: "a", fallback: .fill())
        let allowed = ScriptedAdNetwork(id: "b", fallback: .fill())
        let mediator = try Mediator(
            networks: [blocked, allowed],
            configuration: .init(
                placements: [
                    "p": placement([.init(network: "a", placement: "x"), .init(network: "b", placement: "y")])
                ]
            ), privacy: PrivacyConfiguration(tcfVendorIDs: ["a": 755, "b": 32]))
        var request = interstitial
        request.privacy = PrivacySignals(gdprApplies: true, tcfConsent: Self.consenting(vendors: [32]))
        let outcome = await mediator.loadWithTrace(request)
        #expect(outcome.trace.lines[0].outcome == .skipped(.privacyBlocked))
        #expect(outcome.trace.lines[0].privacyReason == "tcf purpose 1 not consented for vendor 755")
        #expect(outcome.trace.winner?.network == "b")
        #expect(blocked.requests.isEmpty)
        #expect(allowed.requests.first?.privacy.permissions == .all)
        (try outcome.result.get()).ad?.invalidate()
    }

    @Test("COPPA strips the user id and every identifier permission before the adapter is called")
    func coppaStripsIdentifiers() async throws {
        let net = ScriptedAdNetwork(id: "n", fallback: .noFill())
        let mediator = try Mediator(
            networks: [net], configuration: .init(placements: ["p": placement([.init(network: "n", placement: "x")])]))
        var request = interstitial
        request.userID = "u1"
        request.privacy.coppa = true
        _ = await mediator.loadWithTrace(request)
        #expect(net.requests.first?.userID == nil)
        #expect(net.requests.first?.privacy.permissions == PrivacyPermissions.none)
    }

    @Test("a request's own signals win over the stored ones; unset ones are filled from the store")
    func requestSignalsWin() {
        let stored = PrivacySignals(gdprApplies: true, tcfConsent: "stored", usPrivacy: "1YNN")
        let own = PrivacySignals(gdprApplies: false, coppa: true)
        let merged = own.filling(from: stored)
        #expect(merged.gdprApplies == false && merged.tcfConsent == "stored" && merged.usPrivacy == "1YNN")
        #expect(merged.coppa)
    }
    @Test("each blocking row of the rule table names its reason")
    func blockingReasons() {
        func reason(_ tcf: String?, gdpr: Bool? = true, vendor: Int? = 755) -> String? {
            PrivacyRules.verdict(PrivacySignals(gdprApplies: gdpr, tcfConsent: tcf), tcfVendorID: vendor).blockedReason
        }
        var all = TCFTestString()
        all.purposeConsents = Set(1...10)
        all.vendorConsents = [755]
        #expect(reason(all.encoded) == nil)
        #expect(reason(nil) == "gdpr applies without a tcf string")
        #expect(reason("x") == #"gdpr applies, invalid tcf "x" (unsupported_version)"#)
        #expect(reason(nil, gdpr: false) == nil, "no GDPR, no TCF rule")
        var undisclosed = all
        undisclosed.disclosedVendors = [1, 2]
        #expect(reason(undisclosed.encoded) == "tcf vendor 755 not disclosed")
        var noVendor = all
        noVendor.vendorConsents = [1]
        #expect(reason(noVendor.encoded) == "tcf purpose 1 not consented for vendor 755")
        #expect(reason(noVendor.encoded, vendor: nil) == nil, "without a declared vendor only purposes count")
        var restricted = all
        restricted.restrictions = [(purpose: 2, type: 0, vendors: [755])]
        #expect(reason(restricted.encoded) == "tcf purpose 2 not allowed for vendor 755 by a publisher restriction")
        var interestOnly = all
        interestOnly.purposeConsents = [1]
        interestOnly.purposeLegitimateInterests = [2]
        interestOnly.vendorLegitimateInterests = [755]
        #expect(reason(interestOnly.encoded) == nil, "purpose 2 on legitimate interest")
        interestOnly.restrictions = [(purpose: 2, type: 1, vendors: [755])]
        #expect(reason(interestOnly.encoded) == "tcf purpose 2 not consented for vendor 755", "consent required")
        var treatment = all
        treatment.purposeConsents = Set(2...10)
        #expect(reason(treatment.encoded) == "tcf purpose 1 not consented for vendor 755")
        treatment.purposeOneTreatment = true
        #expect(reason(treatment.encoded) == nil, "purpose one treatment waives purpose 1's purpose consent")
    }

    @Test("without gdprApplies, GPP section 2 in force makes GDPR apply and its TC string counts")
    func gppSectionTwoAppliesGDPR() {
        // The GPP specification's example: section 2 is a TC string without any consent.
        let gpp = "DBACNY~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA~1YNN"
        let applying = PrivacySignals(gpp: gpp, gppSectionIDs: [2, 6])
        #expect(DecodedPrivacy(applying).gdprApplies)
        #expect(PrivacyRules.verdict(applying, tcfVendorID: 755).blockedReason != nil)
        let notListed = PrivacySignals(gpp: gpp, gppSectionIDs: [6])
        #expect(!DecodedPrivacy(notListed).gdprApplies)
        #expect(PrivacyRules.verdict(notListed, tcfVendorID: 755).mayBeAsked)
    }

    @Test("US opt-outs, ATT and lmt strip identifiers but never block")
    func strippingRows() {
        func permissions(_ change: (inout PrivacySignals) -> Void) -> PrivacyPermissions {
            var signals = PrivacySignals()
            change(&signals)
            let verdict = PrivacyRules.verdict(signals, tcfVendorID: nil)
            #expect(verdict.mayBeAsked)
            return verdict.permissions
        }
        #expect(permissions { _ in } == .all)
        #expect(permissions { $0.usPrivacy = "1YYN" } == .none)
        #expect(permissions { $0.usPrivacy = "1YNN" } == .all)
        #expect(permissions { $0.appTracking = .authorized } == .all)
        let denied = permissions { $0.appTracking = .denied }
        #expect(!denied.deviceIDs && !denied.userIDs && !denied.personalizedAds && denied.preciseGeo)
        #expect(permissions { $0.limitAdTracking = true } == denied)
        #expect(permissions { $0.gpp = "DBABLA~BVVVkkkklWA.YA" } == .none, "US National opt-outs")
        let geo = permissions { $0.gpp = "DBABLA~BVVqAAEABCA.QA" }
        #expect(geo.deviceIDs && geo.userIDs && !geo.preciseGeo, "precise geolocation consent refused")
    }
}
