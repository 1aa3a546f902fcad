import AdMediation
import AdPrivacy
import Foundation

/// `mediate consent --json` as one typed value: the decoded signals, then each network's decision.
struct ConsentReport: Encodable {
    var signals: DecodedPrivacy
    var networks: [ConsentCommand.Decision]

    enum CodingKeys: String, CodingKey {
        case signals, networks
    }

    /// The keys of `signals`.
    enum SignalKeys: String, CodingKey {
        case gdpr, tcf, gpp, malformed, coppa, lmt, att
        case gdprApplies = "gdpr_applies"
        case gppSectionIDs = "gpp_sid"
        case tcfError = "tcf_error"
        case usPrivacy = "us_privacy"
        case usNational = "us_national"
        case gppError = "gpp_error"
        case underAge = "under_age"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var nested = container.nestedContainer(keyedBy: SignalKeys.self, forKey: .signals)
        let given = signals.signals
        try nested.encode(given.gdprApplies, forKey: .gdpr)
        try nested.encode(signals.gdprApplies, forKey: .gdprApplies)
        try nested.encode(given.gppSectionIDs, forKey: .gppSectionIDs)
        try nested.encode(signals.tcf.map(TCF.init), forKey: .tcf)
        try nested.encode(signals.malformedTCF, forKey: .tcfError)
        try nested.encode(signals.usPrivacy.map(USPrivacy.init), forKey: .usPrivacy)
        try nested.encode(signals.usNational.map(USNational.init), forKey: .usNational)
        try nested.encode(signals.gpp.map(GPP.init), forKey: .gpp)
        try nested.encode(signals.gppError?.description, forKey: .gppError)
        try nested.encode(signals.malformed, forKey: .malformed)
        try nested.encode(given.coppa, forKey: .coppa)
        try nested.encode(given.underAgeOfConsent, forKey: .underAge)
        try nested.encode(given.limitAdTracking, forKey: .lmt)
        try nested.encode(given.appTracking.map { "\($0)" }, forKey: .att)
        try container.encode(networks, forKey: .networks)
    }

    /// A TC string's fields; vendor sets as ranges (``ConsentCommand/ranges(_:)``).
    struct TCF: Encodable {
        var tcf: TCFConsent

        enum CodingKeys: String, CodingKey {
            case version
            case policyVersion = "policy_version"
            case cmpID = "cmp_id"
            case vendorListVersion = "vendor_list_version"
            case purposeConsents = "purpose_consents"
            case purposeLegitimateInterests = "purpose_legitimate_interests"
            case purposeOneTreatment = "purpose_one_treatment"
            case specialFeatureOptIns = "special_feature_opt_ins"
            case publisherCC = "publisher_cc"
            case vendorConsents = "vendor_consents"
            case vendorLegitimateInterests = "vendor_legitimate_interests"
            case disclosedVendors = "disclosed_vendors"
            case publisherRestrictions = "publisher_restrictions"
        }

        /// The keys of a publisher restriction.
        enum RestrictionKeys: String, CodingKey {
            case purpose, type, vendors
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(tcf.version, forKey: .version)
            try container.encode(tcf.policyVersion, forKey: .policyVersion)
            try container.encode(tcf.cmpID, forKey: .cmpID)
            try container.encode(tcf.vendorListVersion, forKey: .vendorListVersion)
            try container.encode(tcf.purposeConsents.ids, forKey: .purposeConsents)
            try container.encode(tcf.purposeLegitimateInterests.ids, forKey: .purposeLegitimateInterests)
            try container.encode(tcf.purposeOneTreatment, forKey: .purposeOneTreatment)
            try container.encode(tcf.specialFeatureOptIns.ids, forKey: .specialFeatureOptIns)
            try container.encode(tcf.publisherCountryCode, forKey: .publisherCC)
            try container.encode(ConsentCommand.ranges(tcf.vendorConsents), forKey: .vendorConsents)
            try container.encode(
                ConsentCommand.ranges(tcf.vendorLegitimateInterests), forKey: .vendorLegitimateInterests)
            try container.encode(tcf.disclosedVendors.map(ConsentCommand.ranges), forKey: .disclosedVendors)
            var restrictions = container.nestedUnkeyedContainer(forKey: .publisherRestrictions)
            for restriction in tcf.publisherRestrictions {
                var nested = restrictions.nestedContainer(keyedBy: RestrictionKeys.self)
                try nested.encode(restriction.purpose, forKey: .purpose)
                try nested.encode("\(restriction.type)", forKey: .type)
                try nested.encode(ConsentCommand.ranges(restriction.vendors), forKey: .vendors)
            }
        }
    }

    /// A US Privacy string's fields, each flag as its letter.
    struct USPrivacy: Encodable {
        var us: USPrivacyString

        enum CodingKeys: String, CodingKey {
            case version, notice
            case optOutSale = "opt_out_sale"
            case lspaCovered = "lspa_covered"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(us.version, forKey: .version)
            try container.encode(String(us.notice.rawValue), forKey: .notice)
            try container.encode(String(us.optOutSale.rawValue), forKey: .optOutSale)
            try container.encode(String(us.lspaCovered.rawValue), forKey: .lspaCovered)
        }
    }

    /// The GPP US National section's fields (`gpc` null when absent).
    struct USNational: Encodable {
        var national: USNationalSection

        enum CodingKeys: String, CodingKey {
            case version, gpc
            case saleOptOut = "sale_opt_out"
            case sharingOptOut = "sharing_opt_out"
            case targetedAdvertisingOptOut = "targeted_advertising_opt_out"
            case sensitiveDataProcessing = "sensitive_data_processing"
            case knownChildSensitiveDataConsents = "known_child_sensitive_data_consents"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(national.version, forKey: .version)
            try container.encode(national.saleOptOut, forKey: .saleOptOut)
            try container.encode(national.sharingOptOut, forKey: .sharingOptOut)
            try container.encode(national.targetedAdvertisingOptOut, forKey: .targetedAdvertisingOptOut)
            try container.encode(national.sensitiveDataProcessing, forKey: .sensitiveDataProcessing)
            try container.encode(
                national.knownChildSensitiveDataConsents, forKey: .knownChildSensitiveDataConsents)
            try container.encode(national.gpc, forKey: .gpc)
        }
    }

    /// A GPP string: its section ids, each section decoded (TCF EU, US Privacy, US National; null when it did not
    /// decode) or said to be kept as text, and each section's error.
    struct GPP: Encodable {
        var gpp: GPPString

        enum CodingKeys: String, CodingKey {
            case sections
            case sectionIDs = "section_ids"
            case sectionErrors = "section_errors"
        }

        /// A section id as a key.
        struct SectionKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { return nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(gpp.sectionIDs, forKey: .sectionIDs)
            var sections = container.nestedContainer(keyedBy: SectionKey.self, forKey: .sections)
            for id in gpp.sectionIDs {
                let key = SectionKey(stringValue: "\(id)")
                switch id {
                case 2: try sections.encode(gpp.tcfEU.map(TCF.init), forKey: key)
                case 6: try sections.encode(gpp.usPrivacy.map(USPrivacy.init), forKey: key)
                case 7: try sections.encode(gpp.usNational.map(USNational.init), forKey: key)
                default: try sections.encode("not decoded (kept as text)", forKey: key)
                }
            }
            let errors = Dictionary(
                gpp.sectionErrors.map { ("\($0.key)", $0.value.description) }, uniquingKeysWith: { first, _ in first })
            try container.encode(errors, forKey: .sectionErrors)
        }
    }
}
