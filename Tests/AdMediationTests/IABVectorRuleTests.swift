import AdPrivacy
import Foundation
import Testing

@testable import AdMediation

/// Issue 44 item 8: the new rules (vendor consent through a declared TCF vendor id, publisher restrictions, GDPR
/// applicability from `gpp_sid`, fail closed on an unreadable string, a section decoded beside its siblings) checked
/// on consent strings the IAB published with their expected fields, not on strings this project encoded. Each test
/// names its vector's repository and file; the published fields are asserted first (decoded by this project's
/// decoder), then the rule the string exercises.
@Suite("Privacy rules on the IAB's published test vectors", .timeLimit(.minutes(1)))
struct IABVectorRuleTests {
    func date(_ seconds: TimeInterval) -> Date { Date(timeIntervalSince1970: seconds) }

    // IABTechLab/iabgpp-java, iabgpp-encoder/src/test/java/com/iab/gpp/encoder/section/TcfEuV2Test.java, testDecode6.
    static let decode6 = "COv_eg6Ov_eg6AOADBENAaCgAP_AAH_AACiQAVEUQQoAIQAqIoghAAQgAA.YAAAAAAAAAAAAAAAAAA"

    @Test func iabgppJavaTcfEuV2Decode6DecodesToItsPublishedFields() throws {
        let tcf = try TCFConsent(decoding: Self.decode6)
        #expect(tcf.version == 2 && tcf.cmpID == 14 && tcf.cmpVersion == 3 && tcf.consentScreen == 1)
        #expect(tcf.consentLanguage == "EN" && tcf.vendorListVersion == 26 && tcf.policyVersion == 2)
        #expect(tcf.isServiceSpecific && !tcf.purposeOneTreatment && tcf.publisherCountryCode == "US")
        #expect(tcf.specialFeatureOptIns.ids == [])
        #expect(tcf.purposeConsents.ids == Array(1...10))
        #expect(tcf.purposeLegitimateInterests.ids == Array(2...10))
        #expect(tcf.vendorConsents.ids == [2, 6, 8, 12, 18, 23, 25, 37, 42])
        #expect(tcf.vendorLegitimateInterests.ids == [2, 6, 8, 12, 18, 23, 37, 42])
    }

    @Test func aVendorWithConsentInDecode6MayBeAskedWithoutPreciseGeo() {
        let verdict = PrivacyRules.verdict(
            PrivacySignals(gdprApplies: true, tcfConsent: Self.decode6), tcfVendorID: 25)
        #expect(verdict.mayBeAsked)
        #expect(verdict.permissions == PrivacyPermissions(preciseGeo: false))
        #expect(verdict.reasons == ["tcf special feature 1 not opted in"])
    }

    @Test func aVendorMissingFromDecode6sVendorConsentsIsBlockedByItsDeclaredID() {
        let signals = PrivacySignals(gdprApplies: true, tcfConsent: Self.decode6)
        #expect(
            PrivacyRules.verdict(signals, tcfVendorID: 755).blockedReason
                == "tcf purpose 1 not consented for vendor 755")
        // The same string judged on purposes alone (no vendor id declared) lets it through: the id is what decides.
        #expect(PrivacyRules.verdict(signals, tcfVendorID: nil).mayBeAsked)
    }

    // IABTechLab/iabgpp-java, iabgpp-encoder/src/test/java/com/iab/gpp/encoder/section/TcfEuV2Test.java, testDecode7.
    static let decode7 = "COoC-kUOoC-kUAHABAENAwCoAIAAAELAAAwIF5wAoAAgAGAvMACX_ABBAAQAFA"

    @Test func iabgppJavaTcfEuV2Decode7DecodesToItsPublishedFields() throws {
        let tcf = try TCFConsent(decoding: Self.decode7)
        #expect(tcf.created == date(1_570_425_474) && tcf.lastUpdated == date(1_570_425_474))  // 2019-10-07T05:17:54Z
        #expect(tcf.cmpID == 7 && tcf.cmpVersion == 1 && tcf.consentScreen == 0 && tcf.vendorListVersion == 48)
        #expect(tcf.isServiceSpecific && tcf.publisherCountryCode == "GB")
        #expect(tcf.specialFeatureOptIns.ids == [1])
        #expect(tcf.purposeConsents.ids == [1])
        #expect(tcf.purposeLegitimateInterests.ids == [2, 7, 9, 10])
        #expect(tcf.vendorConsents.ids == [1, 2, 3, 755])
        #expect(tcf.vendorLegitimateInterests.ids == Array(1...9))
        #expect(tcf.publisherRestrictions.count == 1)
        #expect(tcf.publisherRestrictions.first?.purpose == 1)
        #expect(tcf.publisherRestrictions.first?.type == .notAllowed)
        #expect(tcf.publisherRestrictions.first?.vendors.ids == [10])
    }

    @Test func decode7sPublisherRestrictionBlocksVendor10() {
        let verdict = PrivacyRules.verdict(
            PrivacySignals(gdprApplies: true, tcfConsent: Self.decode7), tcfVendorID: 10)
        #expect(verdict.blockedReason == "tcf purpose 1 not allowed for vendor 10 by a publisher restriction")
    }

    @Test func decode7sVendor755HasPurpose1ButNeitherConsentNorInterestForPurpose2() {
        let verdict = PrivacyRules.verdict(
            PrivacySignals(gdprApplies: true, tcfConsent: Self.decode7), tcfVendorID: 755)
        #expect(verdict.blockedReason == "tcf purpose 2 not consented for vendor 755")
    }

    @Test func decode7sVendor3IsAskedOnLegitimateInterestButGetsNoProfile() {
        let verdict = PrivacyRules.verdict(
            PrivacySignals(gdprApplies: true, tcfConsent: Self.decode7), tcfVendorID: 3)
        #expect(verdict.mayBeAsked)
        #expect(!verdict.permissions.userIDs && !verdict.permissions.personalizedAds)
        #expect(verdict.permissions.deviceIDs && verdict.permissions.preciseGeo)
    }

    // InteractiveAdvertisingBureau/iabtcf-es, modules/core/test/ReportedIssues.test.ts, "201 unable to decode valid
    // TCF2 String": a purpose restriction encoded for a vendor several times; version 2, and restriction (purpose 1,
    // type 1 = require consent) holds vendors 7, 20, 71, 122, 140, 183.
    static let issue201 =
        "CO4VGswO4VGswAfZCBDEAzCsAP_AAH_AAAigGUNf_X9fb2vj-_599_t0eY1f9_63t-wzjheMs-8NyZ-X_J4Wv2MyvB34JqQK"
        + "GRgkunLBAQdtHGncTQgBwIlViTLMY02MjzNKJrJEilsbe2dYGH9vn8XT_ZKZ70-_v__7v3___33_5Ayhr_6_r7e18f3_Pvv9"
        + "ujzGr_v_W9v2GccLxln3huTPy_5PC1-xmV4O_BNSBQyMEl05YICDto407iaEAOBEqsSZZjGmxkeZpRNZIkUtjb2zrAw_t8_i"
        + "6f7JTPen39___d-___--__ICgKAOAAcAA4AFAAjgB6AEYALcGACAW0AtoJAHAAOAAcACgARwA9ACMAFuFABALaAW0GgDgAHA"
        + "AOABQAI4AegBGAC3DgAgFtALaEQBwADgAHAAoAEcAPQAjABbiQAQC2gFtCoA4ABwADgAUACOAHoARgAtxYAIBbQC2hkAcAA4"
        + "ABwAKABHAD0AIwAW40AEAtoBbQ6AOAAcAA4AFAAjgB6AEYALceACAW0AtohAHAAOAAcACgARwA9ACMAFuRABALaAW0SgDgAH"
        + "AAOABQAI4AegBGAC3JgAgFtALaKQBwADgAHAAoAEcAPQAjABblQAQC2gFtA"

    @Test func iabtcfEsIssue201DecodesItsRepeatedRestrictionsToThePublishedVendors() throws {
        let tcf = try TCFConsent(decoding: Self.issue201)
        #expect(tcf.version == 2)
        let vendors = Set(
            tcf.publisherRestrictions.filter { $0.purpose == 1 && $0.type == .requireConsent }.flatMap(\.vendors.ids))
        #expect(vendors.sorted() == [7, 20, 71, 122, 140, 183])
    }

    // InteractiveAdvertisingBureau/iabtcf-es, modules/core/test/ReportedIssues.test.ts, "142 it should throw an error
    // if the bitfield length does not match the maxId".
    static let issue142 =
        "CLSYjTaOngnCIAOABBENAXCMAGOAABBAAA7IA5n-m7fP6_3fbqVv6E__PoA5Aqff3aJx8tv_1967rfnQEQoAIAAQCrwkAEAB"
        + "AcACABIMACAAuApEVABABUSABgBCAVSAtIoACACIArYQAHACgAFgAVwBJgDcAI7AWgMAAgBiKgAgBMgFfKQAQBRkQAQA4AFi"
        + "BAAoA-AEVAJlAVgAtYcACAJcAr4eABAK8OgBgFzAOmAqwgABAWyA.IFukWSQh"

    @Test func iabtcfEsIssue142sShortBitfieldIsRefusedAndBlocksUnderGDPR() {
        #expect(throws: ConsentStringError.self) { try TCFConsent(decoding: Self.issue142) }
        let verdict = PrivacyRules.verdict(
            PrivacySignals(gdprApplies: true, tcfConsent: Self.issue142), tcfVendorID: 1)
        #expect(verdict.blockedReason?.hasPrefix("gdpr applies, invalid tcf") == true, "\(verdict)")
    }

    // InteractiveAdvertisingBureau/iabtcf-es, modules/core/test/ReportedIssues.test.ts, "156 it should auto detect 1
    // version": the published decoder reads version 1 (TCF v1.1, withdrawn by the IAB in 2020).
    static let issue156 =
        "BOhwdphOxFC7tAHABBFRC--AAAAuhr_7__7-_9_-_f__9uj3Or_v_f__32ccL59v_h_7v-_7fi_20nV4u_1vft9yfk1-5ctD"
        + "ztp507iakivXmqdeb9v_nz3_5pxP78k89r7337Ew_v8_v-b7BCON_YxEiA"

    @Test func iabtcfEsIssue156sVersion1StringIsUnsupportedAndBlocksUnderGDPR() {
        do {
            _ = try TCFConsent(decoding: Self.issue156)
            Issue.record("a version 1 string decoded as TCF v2")
        } catch {
            #expect(error.code == .unsupportedVersion)
        }
        // No `gdpr` given: a TC string alone makes GDPR apply (the applicability rules), and an unreadable one blocks.
        let verdict = PrivacyRules.verdict(PrivacySignals(tcfConsent: Self.issue156), tcfVendorID: nil)
        #expect(verdict.blockedReason?.hasPrefix("gdpr applies, invalid tcf") == true, "\(verdict)")
    }

    // IABTechLab/iabgpp-es, modules/cmpapi/test/GppModel.test.ts, "should decode tcfeuv2 sections".
    static let gppTCF = "DBABMA~CPSG_8APSG_8ANwAAAENAwCAAAAAAAAAAAAAAAAAAAAA.QAAA.IAAA"

    @Test func iabgppEsTcfEuV2SectionDecodesToItsPublishedFields() throws {
        let gpp = try GPPString(decoding: Self.gppTCF)
        #expect(gpp.sectionIDs == [2])
        let tcf = try #require(gpp.tcfEU)
        #expect(tcf.version == 2 && tcf.cmpID == 880 && tcf.cmpVersion == 0 && tcf.consentScreen == 0)
        #expect(tcf.consentLanguage == "EN" && tcf.vendorListVersion == 48 && tcf.policyVersion == 2)
        #expect(!tcf.isServiceSpecific && !tcf.useNonStandardTexts && !tcf.purposeOneTreatment)
        #expect(tcf.publisherCountryCode == "AA")
        #expect(tcf.created == date(1_640_995_200) && tcf.lastUpdated == date(1_640_995_200))  // 2022-01-01T00:00:00Z
    }

    @Test func gppSidListingSection2MakesGDPRApplyOverGdpr0AndTheEmptyTCFSectionBlocks() {
        let signals = PrivacySignals(gdprApplies: false, gpp: Self.gppTCF, gppSectionIDs: [2])
        // Its disclosed-vendors segment (`.QAAA`) lists no vendor: the first blocking row of the rules.
        #expect(PrivacyRules.verdict(signals, tcfVendorID: 880).blockedReason == "tcf vendor 880 not disclosed")
        #expect(PrivacyRules.verdict(signals, tcfVendorID: nil).blockedReason == "tcf purpose 1 not consented")
    }

    // IABTechLab/iabgpp-es, modules/cmpapi/test/GppModel.test.ts, "should decode uspv1 and tcfeuv2 sections".
    static let gppTCFAndUSP = "DBACNYA~CPSG_8APSG_8ANwAAAENAwCAAAAAAAAAAAAAAAAAAAAA.QAAA.IAAA~1YNN"

    @Test func iabgppEsTcfAndUspv1StringDecodesToItsPublishedSections() throws {
        let gpp = try GPPString(decoding: Self.gppTCFAndUSP)
        #expect(gpp.sectionIDs == [2, 6])
        #expect(gpp.tcfEU?.cmpID == 880)
        #expect(gpp.usPrivacy?.notice == .yes && gpp.usPrivacy?.optOutSale == .no && gpp.usPrivacy?.lspaCovered == .no)
    }

    @Test func onlyTheSectionsGppSidListsCountAndAnEmptyListMeansEverySection() {
        // gpp_sid 6 alone: section 2 is not in force, GDPR does not apply, the US Privacy section opts out of nothing.
        let usOnly = PrivacyRules.verdict(PrivacySignals(gpp: Self.gppTCFAndUSP, gppSectionIDs: [6]), tcfVendorID: 1)
        #expect(usOnly.mayBeAsked && usOnly.permissions == .all)
        // No gpp_sid: every section of the string applies, section 2 among them, and its TC string consents nothing.
        let every = PrivacyRules.verdict(PrivacySignals(gpp: Self.gppTCFAndUSP), tcfVendorID: nil)
        #expect(every.blockedReason == "tcf purpose 1 not consented")
    }

    // IABTechLab/iabgpp-java, iabgpp-encoder/src/test/java/com/iab/gpp/encoder/section/UsNatTest.java, testDecode1:
    // sale, sharing and targeted-advertising opt-outs 1 (opted out), GPC true. Beside it a US Privacy section of the
    // wrong length (the GPP spec's US Privacy section is exactly four characters).
    @Test func aReadableUsNationalOptOutIsHonouredBesideAnUnreadableUsPrivacySibling() throws {
        let gpp = try GPPString(decoding: "DBABzw~1YNNN~BVVVkkkklWA.YA")
        #expect(gpp.usNational?.saleOptOut == 1 && gpp.usNational?.sharingOptOut == 1)
        #expect(gpp.usNational?.targetedAdvertisingOptOut == 1 && gpp.usNational?.gpc == true)
        let verdict = PrivacyRules.verdict(PrivacySignals(gpp: "DBABzw~1YNNN~BVVVkkkklWA.YA"), tcfVendorID: nil)
        #expect(verdict.mayBeAsked)
        #expect(verdict.reasons.contains("us national opt-out"))
        #expect(verdict.reasons.contains { $0.hasPrefix("invalid gpp section 6") })
        #expect(!verdict.permissions.deviceIDs && !verdict.permissions.userIDs)
    }
}
