import AdPrivacy
import Foundation
import Testing

@testable import AdMediation

/// The TCF v2 and GPP decoders against the IAB Tech Lab's own test vectors. Each string and its expected fields are
/// copied from the reference library named above the test (InteractiveAdvertisingBureau/iabtcf-java,
/// IABTechLab/iabgpp-java); nothing here is derived from this project's decoder.
@Suite("Consent string decoders", .timeLimit(.minutes(1)))
struct ConsentDecoderTests {
    func date(_ seconds: TimeInterval) -> Date { Date(timeIntervalSince1970: seconds) }

    /// `bits` (a string of 0/1) as unpadded base64url, as iabtcf-java's test helper `base64FromBitString` builds
    /// strings bit by bit (bytes zero-padded on the right).
    func base64URL(bits: String) -> String {
        var bytes: [UInt8] = []
        var current: UInt8 = 0
        var count = 0
        for bit in bits {
            current = (current << 1) | (bit == "1" ? 1 : 0)
            count += 1
            if count == 8 {
                bytes.append(current)
                (current, count) = (0, 0)
            }
        }
        if count > 0 { bytes.append(current << UInt8(8 - count)) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    // iabtcf-java, iabtcf-decoder/src/test/java/com/iabtcf/decoder/TCStringV2Test.java,
    // testCanConstructTCModelFromBase64String.
    @Test("a TCF v2 core string decodes to the IAB's expected header, purposes and special features")
    func tcfCoreFields() throws {
        let tcf = try TCFConsent(decoding: "COtybn4PA_zT4KjACBENAPCIAEBAAECAAIAAAAAAAAAA")
        #expect(tcf.version == 2)
        #expect(tcf.created == date(1_580_058_060))  // 2020-01-26T17:01:00Z
        #expect(tcf.lastUpdated == date(1_612_285_260))  // 2021-02-02T17:01:00Z
        #expect(tcf.cmpID == 675)
        #expect(tcf.cmpVersion == 2)
        #expect(tcf.consentScreen == 1)
        #expect(tcf.vendorListVersion == 15)
        #expect(tcf.policyVersion == 2)
        #expect(tcf.consentLanguage == "EN")
        #expect(tcf.publisherCountryCode == "AA")
        #expect(!tcf.isServiceSpecific)
        #expect(tcf.purposeOneTreatment)
        #expect(!tcf.useNonStandardTexts)
        #expect(tcf.specialFeatureOptIns.ids == [1])
        #expect(tcf.purposeConsents.ids == [2, 10])
        #expect(tcf.purposeLegitimateInterests.ids == [2, 9])
        #expect(tcf.disclosedVendors == nil)
    }

    // TCStringV2Test.java, testConstructConsentsFromBitFields.
    @Test("TCF vendor consents and legitimate interests decode from bitfields")
    func tcfVendorBitfields() throws {
        let tcf = try TCFConsent(
            decoding: "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA")
        #expect(tcf.purposeConsents.ids == [3, 4, 5, 6, 7, 8, 9])
        #expect(tcf.vendorConsents.ids == [23, 37, 47, 48, 53, 65, 98])
        #expect(tcf.vendorLegitimateInterests.ids == [37, 47, 48, 53, 65, 98, 129])
    }

    // TCStringV2Test.java, testCanParseDisclosedAndAllowedVendors.
    @Test("the TCF disclosed-vendors and allowed-vendors segments decode")
    func tcfDisclosedAndAllowed() throws {
        let tcf = try TCFConsent(
            decoding: "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA"
                + ".IBAgAAAgAIAwgAgAAAAEAAAACA.QAagAQAgAIAwgA")
        #expect(tcf.allowedVendors?.ids == [12, 23, 37, 47, 48, 53])
        #expect(tcf.disclosedVendors?.ids == [23, 37, 47, 48, 53, 65, 98, 129])
    }

    // TCStringV2Test.java, testCanParseAllParts (a padded publisher segment).
    @Test("a TCF publisher purposes segment with base64 padding decodes")
    func tcfPublisherSegment() throws {
        let tcf = try TCFConsent(
            decoding: "COrEAV4OrXx94ACABBENAHCIAD-AAAAAAACAAxAAAAgAIAwgAgAAAAEAgQAAAAAEAYQAQAAAACAAAABAAA"
                + ".IBAgAAAgAIAwgAgAAAAEAAAACA.QAagAQAgAIAwgA.cAAAAAAAITg=")
        #expect(tcf.publisherPurposes?.consents.count == 1)
    }

    // TCStringV2Test.java, testCanParseRangeEncodedVendorLegitimateInterests and testRange.
    @Test("TCF range-encoded vendor sections decode")
    func tcfRanges() throws {
        #expect(
            try TCFConsent(decoding: "COv__-wOv__-wC2AAAENAPCgAAAAAAAAAAAAA_wAQA_gEBABAEAAAA")
                .vendorLegitimateInterests.ids == [128])
        #expect(
            try TCFConsent(decoding: "COwBOpCOwBOpCLqAAAENAPCAAAAAAAAAAAAAFfwAYFfAV-BVkAGBVYFWAAA").vendorConsents.ids
                == [702, 703])
        #expect(
            try TCFConsent(decoding: "COwBOpCOwBOpCLqAAAENAPCAAAAAAAAAAAAAFfwAQFfgUbABAUaAAA").vendorConsents.ids
                == [703])
        #expect(try TCFConsent(decoding: "COwxsONOwxsONKpAAAENAdCAAMAAAAAAAAAAAAAAAAAA").purposeConsents.contains(1))
    }

    // TCStringV2Test.java, testPublisherRestrictions: the bit string is the test's own.
    @Test("TCF publisher restrictions decode with their purpose and type")
    func tcfPublisherRestrictions() throws {
        let bits =
            "0000100011101011100" + "1000000000000001010" + "0000001110101110010" + "0000000000000101000"
            + "0000110011111000000" + "0000000000000000100" + "0011010000000011110" + "0001000000000000000"
            + "0000000000000000000" + "0000000000000000000" + "0000000000000000000" + "0000000000000000000"
            + "0000000000000000000" + "000000000011" + "000001" + "01" + "000000000000" + "000010" + "00"
            + "000000000000" + "000011" + "10" + "000000000000" + "0"
        let tcf = try TCFConsent(decoding: base64URL(bits: bits))
        #expect(tcf.publisherRestrictions.map(\.purpose) == [1, 2, 3])
        #expect(tcf.publisherRestrictions.map(\.type) == [.requireConsent, .notAllowed, .requireLegitimateInterest])
        #expect(tcf.publisherRestrictions.allSatisfy { $0.vendors.isEmpty })
    }

    // iabgpp-java, iabgpp-encoder/src/test/java/com/iab/gpp/encoder/section/TcfEuV2Test.java, testDecode3: a
    // disclosed-vendors segment of 434 vendors.
    @Test("a large TCF disclosed-vendors segment decodes to the IAB's 434 vendors")
    func tcfLargeDisclosed() throws {
        let segment =
            "GLtV_T9fb2vj-_Z99_tkeYwf95y3p-wzhheMs-8NyZeH_B4Wv2MyvBX4JiQKGRgksjLBAQdtHGlcTQgBwIlViTLMYk2"
            + "MjzNKJrJEilsbO2dYGD9Pn8HT3ZCY70-vv__7v3ff_3g"
        let tcf = try TCFConsent(
            decoding: "CPcqBNJPcqBNJNwAAAENAwCAAAAAAAAAAAAAAAAAAAAA.YAAAAAAAAAA.Q\(segment).I\(segment)")
        #expect(tcf.cmpID == 880)
        #expect(tcf.vendorListVersion == 48)
        #expect(tcf.publisherPurposes != nil)
        let disclosed = try #require(tcf.disclosedVendors).ids
        #expect(disclosed.count == 434)
        #expect(Array(disclosed.prefix(10)) == [1, 2, 4, 6, 8, 10, 11, 12, 13, 14])
        #expect(Array(disclosed.suffix(9)) == [782, 783, 784, 785, 786, 788, 789, 790, 791])
        #expect(tcf.allowedVendors?.count == 434)
    }

    @Test("hostile TCF strings are typed errors naming the fault, never a trap")
    func tcfHostile() {
        let cases: [(String, ConsentStringError.Code)] = [
            ("", .empty), ("C", .truncated), ("B", .unsupportedVersion), ("CO!", .invalidCharacter),
            (String(repeating: "C", count: TCFConsent.maxLength + 1), .tooLong),
            ("COtybn4PA_zT4KjACBENAPCIAEBAAECAAIAAAAAAAAAA.", .empty),
        ]
        for (text, code) in cases {
            #expect(throws: ConsentStringError.self) { try TCFConsent(decoding: text) }
            do {
                _ = try TCFConsent(decoding: text)
            } catch {
                #expect(error.code == code, "\(text.prefix(20)): \(error)")
                #expect(!error.message.isEmpty)
            }
        }
    }

    // iabgpp-java, section/HeaderV1Test.java, testDecode1…3.
    @Test("GPP headers decode to the IAB's section ids")
    func gppHeaders() throws {
        #expect(try GPPString(decoding: "DBAA").sectionIDs == [])
        #expect(
            try GPPString(decoding: "DBABMA~CPSG_8APSG_8AAAAAAENAACAAAAAAAAAAAAAAAAAAAAA.QAAA.IAAA").sectionIDs == [2])
        #expect(
            try GPPString(decoding: "DBACNYA~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA~1YNN").sectionIDs == [2, 6])
    }

    // The GPP specification's example, also in IABTechLab/iabgpp-es and iabgpp-java's GppModelTest:
    // EU TCF v2 (section 2) and US Privacy (section 6).
    @Test("a GPP string with EU TCF v2 and US Privacy sections decodes both")
    func gppTCFAndUSPrivacy() throws {
        let gpp = try GPPString(decoding: "DBACNY~CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA~1YNN")
        #expect(gpp.version == 1)
        #expect(gpp.sectionIDs == [2, 6])
        #expect(gpp.tcfEU?.version == 2)
        #expect(gpp.tcfEU?.consentLanguage == "EN")
        #expect(gpp.usPrivacy == (try USPrivacyString(decoding: "1YNN")))
        #expect(gpp.sections[6] == "1YNN")
    }

    // iabgpp-java, section/UspV1Test.java, testDecode1 and testDecode2.
    @Test("US Privacy strings decode to their flags")
    func usPrivacy() throws {
        let first = try USPrivacyString(decoding: "1NYN")
        #expect(first.version == 1 && first.notice == .no && first.optOutSale == .yes && first.lspaCovered == .no)
        let second = try USPrivacyString(decoding: "1YNY")
        #expect(second.notice == .yes && second.optOutSale == .no && second.lspaCovered == .yes)
        #expect(throws: ConsentStringError.self) { try USPrivacyString(decoding: "1YN") }
        #expect(throws: ConsentStringError.self) { try USPrivacyString(decoding: "1YNX") }
        #expect(throws: ConsentStringError.self) { try USPrivacyString(decoding: "\u{0}YNN") }
    }

    // iabgpp-java, section/UsNatTest.java, testDecode1 and testDecodeWithGpcSegmentExcluded.
    @Test("a US National section decodes to the IAB's expected fields, with and without GPC")
    func usNational() throws {
        let section = try USNationalSection(decoding: "BVVVkkkklWA.YA")
        #expect(section.version == 1)
        #expect(
            [
                section.sharingNotice, section.saleOptOutNotice, section.sharingOptOutNotice,
                section.targetedAdvertisingOptOutNotice, section.sensitiveDataProcessingOptOutNotice,
                section.sensitiveDataLimitUseNotice, section.saleOptOut, section.sharingOptOut,
                section.targetedAdvertisingOptOut,
            ] == Array(repeating: 1, count: 9))
        #expect(section.sensitiveDataProcessing == [2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0])
        #expect(section.knownChildSensitiveDataConsents == [2, 1])
        #expect(section.personalDataConsents == 1)
        #expect(section.mspaCoveredTransaction == 1)
        #expect(section.mspaOptOutOptionMode == 1)
        #expect(section.mspaServiceProviderMode == 2)
        #expect(section.gpc == true)
        let withoutGPC = try USNationalSection(decoding: "BVVVkkkklWA")
        #expect(withoutGPC.gpc == nil)
        #expect(withoutGPC.sensitiveDataProcessing == section.sensitiveDataProcessing)
        #expect(throws: ConsentStringError.self) { try USNationalSection(decoding: "z") }
    }

    // A GPP string from IABTechLab's fixtures (also in iabconsent's Go tests): US National (7) and US Privacy (6).
    @Test("a GPP string with US National and US Privacy sections decodes both, other sections kept as text")
    func gppUSNational() throws {
        let gpp = try GPPString(decoding: "DBABzw~1YNN~BVVqAAEABCA.QA")
        #expect(gpp.sectionIDs == [6, 7])
        #expect(gpp.usPrivacy?.optOutSale == .no)
        #expect(gpp.usNational?.saleOptOut == 2)
        #expect(gpp.usNational?.gpc == false)
        let states = try GPPString(decoding: "DBABrGA~BVVqAAEABCA~BVoYYZoI~BVoYYYI~BVoYYQg~BVaGGGCA~BVoYYYQg")
        #expect(states.sectionIDs == [7, 8, 9, 10, 11, 12])
        #expect(states.sections[8] == "BVoYYZoI")
        #expect(states.tcfEU == nil)
    }

    // GPP "Consent String Specification": each section is encoded and read on its own, after the header that lists
    // it; a section this decoder cannot read is kept as its error while the header and its siblings still count.
    @Test("a section that does not decode is its own error; the string and its other sections still decode")
    func gppBrokenSectionIsItsOwnError() throws {
        let empty = try GPPString(decoding: "DBABMA~")
        #expect(empty.sectionIDs == [2] && empty.tcfEU == nil)
        #expect(empty.sectionErrors[2]?.code == .empty)
        let longUSP = try GPPString(decoding: "DBABTA~1YNNN")
        #expect(longUSP.usPrivacy == nil && longUSP.sectionErrors[6]?.code == .invalidField)
        // Sections 6 and 7: a broken US Privacy section beside a valid US National one that opts out of sale.
        let mixed = try GPPString(decoding: "DBABzw~1YNNN~BVVVkkkklWA.YA")
        #expect(mixed.sectionErrors[6] != nil)
        #expect(mixed.usNational?.saleOptOut == 1)
    }

    @Test("hostile GPP strings are typed errors naming the fault, never a trap")
    func gppHostile() {
        let cases: [(String, ConsentStringError.Code)] = [
            ("", .empty), ("D", .truncated), ("ABAA", .invalidField), ("DCAA", .unsupportedVersion),
            ("DBABMA", .invalidField),
            ("DBABM_", .invalidField), (String(repeating: "D", count: GPPString.maxLength + 1), .tooLong),
            ("DB__________", .truncated),
        ]
        for (text, code) in cases {
            do {
                _ = try GPPString(decoding: text)
                Issue.record("\(text.prefix(20)) decoded")
            } catch {
                #expect(error.code == code, "\(text.prefix(20)): \(error)")
            }
        }
    }
}
