import AdMediationTesting
import AdPrivacy
import TestSupport
import Testing

@testable import AdMediation

/// Issue 44 item 2: when GDPR applies, decided in one place (`DecodedPrivacy.gdprApplies`) and read the stricter way
/// where the signals disagree.
@Suite("When GDPR applies")
struct ConsentApplicabilityTests {
    /// A TC string consenting purposes 1 and 2 and nothing else (TCF v2 core segment, built by TCFTestString).
    static var consenting: String {
        var tcf = TCFTestString()
        tcf.purposeConsents = [1, 2]
        return tcf.encoded
    }

    func verdict(_ signals: PrivacySignals) -> PrivacyVerdict {
        PrivacyRules.verdict(DecodedPrivacy(signals), tcfVendorID: nil)
    }

    // GPP specification, `gpp_sid` (OpenRTB regs.gpp_sid): "the section(s) of the string which should be applied for
    // this transaction". Section 2 is the EU TCF v2: listing it says the EU TCF applies, whatever `gdpr` says.
    @Test("gpp_sid listing section 2 makes GDPR apply even when gdpr=0 is given")
    func sectionTwoListedOverridesGDPRZero() {
        let signals = PrivacySignals(gdprApplies: false, gppSectionIDs: [2])
        #expect(DecodedPrivacy(signals).gdprApplies)
        #expect(verdict(signals).blockedReason == "gdpr applies without a tcf string")
    }

    @Test("gpp_sid listing section 2 makes GDPR apply when the GPP string lacks section 2")
    func sectionTwoListedWithoutTheSection() {
        // Header listing section 6 only, with a US Privacy section that does not opt out.
        let signals = PrivacySignals(gpp: "DBABT~1YNN", gppSectionIDs: [2, 6])
        #expect(DecodedPrivacy(signals).gdprApplies)
        #expect(!verdict(signals).mayBeAsked)
    }

    @Test("with section 2 listed and the TC string in GPP section 2, that string decides")
    func sectionTwoCarriesTheConsent() {
        let signals = PrivacySignals(gdprApplies: false, gpp: "DBABM~\(Self.consenting)", gppSectionIDs: [2])
        #expect(verdict(signals).mayBeAsked)
    }

    // TCF v2 (IAB Europe Transparency & Consent String v2 format): a TC string is created by a CMP that surfaced the
    // TCF to the user. Given without `gdpr`, this project reads it as GDPR applying (fail closed), not as nothing.
    @Test("a TC string given without gdpr makes GDPR apply, so its refusals count")
    func tcfWithoutGDPRApplies() {
        var refusing = TCFTestString()
        refusing.purposeConsents = [2]
        let signals = PrivacySignals(tcfConsent: refusing.encoded)
        #expect(DecodedPrivacy(signals).gdprApplies)
        #expect(verdict(signals).blockedReason == "tcf purpose 1 not consented")
    }

    @Test("an explicit gdpr=0 without section 2 listed keeps GDPR off, even with a TC string")
    func explicitZeroWins() {
        let signals = PrivacySignals(gdprApplies: false, tcfConsent: "not-a-tc-string")
        #expect(!DecodedPrivacy(signals).gdprApplies)
        #expect(verdict(signals).mayBeAsked)
    }

    // GPP: with no section ids given, every section of the string is read as applicable (the strictest reading).
    @Test("an empty gpp_sid with a section 2 in the GPP string makes GDPR apply when gdpr is not given")
    func emptySectionListReadsEverySection() {
        var refusing = TCFTestString()
        refusing.purposeConsents = [2]
        let signals = PrivacySignals(gpp: "DBABM~\(refusing.encoded)")
        #expect(DecodedPrivacy(signals).gdprApplies)
        #expect(verdict(signals).blockedReason == "tcf purpose 1 not consented")
    }

    @Test("nothing given: GDPR does not apply")
    func nothingGiven() {
        #expect(!DecodedPrivacy(PrivacySignals()).gdprApplies)
        #expect(verdict(PrivacySignals()).permissions == .all)
    }
}

/// Issue 44 item 3: a GPP section that decodes is honoured when a sibling does not, and every malformed signal is
/// named by its field in the reasons.
@Suite("Malformed signals are named and siblings honoured")
struct MalformedSiblingTests {
    // GPP "Consent String Specification": the header lists the sections, each encoded on its own after `~`.
    @Test("a valid section 7 opt-out survives a broken section 6")
    func validUSNationalSurvivesABrokenSibling() {
        // Sections 6 and 7: US Privacy `1YNNN` (five characters, invalid), US National opting out of sale.
        let decoded = DecodedPrivacy(PrivacySignals(gpp: "DBACTY~1YNNN~BVVVkkkklWA.YA"))
        #expect(decoded.gppError == nil)
        #expect(decoded.usNational?.saleOptOut == 1)
        let verdict = PrivacyRules.verdict(decoded, tcfVendorID: nil)
        #expect(verdict.reasons.contains("us national opt-out"), "\(verdict.reasons)")
        #expect(verdict.reasons.contains(#"invalid gpp section 6 "1YNNN" (invalid_field)"#), "\(verdict.reasons)")
        #expect(verdict.permissions == .none)
    }

    @Test("a valid section 2 consent is honoured beside a broken section 7, whose identifiers are still stripped")
    func validTCFSurvivesABrokenSibling() {
        var consent = TCFTestString()
        consent.purposeConsents = [1, 2, 3, 4]
        // Sections 2 and 7: the consent, then a US National section that does not decode.
        let signals = PrivacySignals(gdprApplies: true, gpp: "DBACMM~\(consent.encoded)~z", gppSectionIDs: [2, 7])
        let verdict = PrivacyRules.verdict(DecodedPrivacy(signals), tcfVendorID: nil)
        #expect(verdict.mayBeAsked, "\(verdict.reasons)")
        #expect(verdict.permissions.deviceIDs == false && verdict.permissions.userIDs == false)
        #expect(verdict.reasons.contains { $0.hasPrefix("invalid gpp section 7 \"z\"") }, "\(verdict.reasons)")
    }

    @Test("a TC string that does not decode blocks under GDPR with a reason naming the field")
    func malformedTCFNamesTheField() async throws {
        let clock = ManualAdClock()
        let network = ScriptedAdNetwork(id: "n", clock: clock, fallback: .fill())
        let mediator = try Mediator(
            networks: [network],
            configuration: .init(placements: ["p": placement([.init(network: "n", placement: "n1")])]), clock: clock)
        let outcome = await mediator.loadWithTrace(
            mediator.request(for: "p", privacy: PrivacySignals(gdprApplies: true, tcfConsent: "CO??")))
        #expect(network.requests.isEmpty)
        let reason = try #require(outcome.trace.lines.first?.privacyReason)
        #expect(reason.hasPrefix(#"gdpr applies, invalid tcf "CO??" ("#), "\(reason)")
    }

    @Test("a malformed US Privacy string is named with its value, cut to a bounded length")
    func malformedUSPrivacyIsQuoted() {
        let long = String(repeating: "1", count: 100)
        let decoded = DecodedPrivacy(PrivacySignals(usPrivacy: long))
        #expect(
            decoded.malformed.first == "invalid us_privacy \"\(String(repeating: "1", count: 24))…\" (invalid_field)")
        #expect(
            DecodedPrivacy(PrivacySignals(usPrivacy: "1yyn")).malformed == [
                #"invalid us_privacy "1yyn" (invalid_field)"#
            ])
    }
}

/// Issue 44 item 5: consent strings are decoded once per string, in a bounded cache shared by concurrent requests.
@Suite("Consent strings are decoded once")
struct ConsentDecodeCacheTests {
    static var consenting: String { ConsentApplicabilityTests.consenting }

    @Test("the same TC string is decoded once, whatever the number of requests")
    func sameStringDecodedOnce() {
        let cache = ConsentDecodeCache()
        for _ in 0..<10 { #expect((try? cache.tcf(Self.consenting).get()) != nil) }
        #expect(cache.decodes == 1)
    }

    @Test("concurrent requests share the decoded strings")
    func concurrentRequestsShare() async {
        let cache = ConsentDecodeCache()
        let text = Self.consenting
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<32 { group.addTask { (try? cache.tcf(text).get()) != nil } }
            for await decoded in group { #expect(decoded) }
        }
        let afterwards = cache.decodes
        #expect(afterwards >= 1 && afterwards <= 32)
        _ = cache.tcf(text)
        #expect(cache.decodes == afterwards, "a string already decoded is not decoded again")
    }

    @Test("the cache keeps a bounded number of strings, the oldest dropped first")
    func bounded() {
        let cache = ConsentDecodeCache(capacity: 4)
        for index in 0..<10 { _ = cache.usPrivacy("1Y\(index % 2 == 0 ? "Y" : "N")\(index)") }
        #expect(cache.counts.usPrivacy == 4)
        let before = cache.decodes
        _ = cache.usPrivacy("1YY0")
        #expect(cache.decodes == before + 1, "the oldest string was dropped, so it is decoded again")
    }

    @Test("a TC string longer than its decoder reads is invalid (fails closed) and is not kept")
    func overLongStringIsInvalid() {
        let cache = ConsentDecodeCache()
        let long = String(repeating: "C", count: TCFConsent.maxLength + 1)
        guard case .failure(let error) = cache.tcf(long) else {
            Issue.record("an over-long string decoded")
            return
        }
        #expect(error.code == .tooLong)
        #expect(cache.counts.tcf == 0)
        let verdict = PrivacyRules.verdict(PrivacySignals(gdprApplies: true, tcfConsent: long), tcfVendorID: nil)
        #expect(!verdict.mayBeAsked)
    }

    @Test("a malformed string is logged once, naming the field, never the value")
    func malformedLoggedOnce() {
        let capture = LogCapture()
        let cache = ConsentDecodeCache(logger: capture.logger(label: "t"))
        for _ in 0..<5 { _ = cache.usPrivacy("1yyn") }
        let warnings = capture.all.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["field"] == "us_privacy")
        #expect(!"\(warnings)".contains("1yyn"))
    }
}
