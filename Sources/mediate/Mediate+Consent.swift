import AdMediation
import AdPrivacy
import ArgumentParser
import Foundation
import MediateKit

/// `mediate consent`: the consent inspector (issue 44 item 7). Decodes the privacy options as the library does and
/// prints the signals (TCF purposes, vendors, restrictions; GPP sections; US Privacy; what did not decode) and, for
/// each configured network, the privacy rules' decision through the same gate every other path uses: asked (with what
/// is restricted and why) or `privacy_blocked` with the reason. Sends no request.
struct ConsentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consent",
        abstract: "Decode the privacy signals and show, per configured network, what the privacy rules decide.",
        discussion: """
            Sends no ad request: the decision is the gate's that `load`, `compare`, `show` and `conformance` apply.

            Examples:
              mediate consent --gdpr 1 --tcf CPXxRfAPXxRfAAfKABENB
              mediate consent --config my.json --us-privacy 1YYN --gpp DBABzw~1YNN~BVVqAAEABCA.QA --json
            """)

    @OptionGroup var options: ConfigOptions
    @OptionGroup(title: "Privacy signals (decoded and decided on)") var privacy: PrivacyOptions
    @Flag(name: .long, help: "JSON output.") var json = false

    /// The longest list of vendor ranges printed (a TC string may hold thousands).
    static let maxRanges = 50

    /// One network's decision.
    struct Decision: Sendable {
        var network: String
        var type: String?
        var vendor: Int?
        var verdict: PrivacyVerdict

        var json: [String: Any] {
            let permissions = verdict.permissions
            return [
                "network": network, "type": type ?? NSNull(), "tcf_vendor_id": vendor ?? NSNull(),
                "asked": verdict.mayBeAsked,
                "reason": verdict.blockedReason.map { "privacy_blocked: \($0)" } ?? NSNull(),
                "restrictions": verdict.mayBeAsked ? verdict.reasons : [],
                "permissions": [
                    "device_ids": permissions.deviceIDs, "user_ids": permissions.userIDs,
                    "precise_geo": permissions.preciseGeo, "personalized_ads": permissions.personalizedAds,
                ],
            ]
        }
    }

    func run() async throws {
        let signals = privacy.signals
        let decisions = try await Environment.with(options, progress: Progress(enabled: false)) { env in
            env.networks.keys.sorted().compactMap { id -> Decision? in
                guard let gated = env.networks[id] as? PrivacyGatedNetwork else { return nil }
                var request = AdRequest(placement: "", format: .native, privacy: signals)
                let verdict = gated.gate(&request)
                let vendor = env.configuration.privacy.tcfVendorID(
                    of: id, declared: gated.network.capabilities.tcfVendorID)
                return Decision(
                    network: id, type: env.configuration.networks[id]?.type, vendor: vendor, verdict: verdict)
            }
        }
        let decoded = DecodedPrivacy(signals)
        if json {
            let object: [String: Any] = ["signals": Self.signalsJSON(decoded), "networks": decisions.map(\.json)]
            let data = try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for line in Self.text(decoded, decisions: decisions) { print(TerminalText.escaped(line)) }
        }
    }

    /// `[1, 2, 4…9]`, at most ``maxRanges`` ranges.
    static func ranges(_ set: ConsentIDSet) -> String {
        guard set.ranges.count > maxRanges else { return set.description }
        let shown = set.ranges.prefix(maxRanges).map {
            $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)…\($0.upperBound)"
        }
        return "[" + shown.joined(separator: ", ") + ", … (\(set.ranges.count - maxRanges) more ranges)]"
    }

    static func tcfJSON(_ tcf: TCFConsent) -> [String: Any] {
        [
            "version": tcf.version, "policy_version": tcf.policyVersion, "cmp_id": tcf.cmpID,
            "vendor_list_version": tcf.vendorListVersion, "purpose_consents": tcf.purposeConsents.ids,
            "purpose_legitimate_interests": tcf.purposeLegitimateInterests.ids,
            "purpose_one_treatment": tcf.purposeOneTreatment,
            "special_feature_opt_ins": tcf.specialFeatureOptIns.ids, "publisher_cc": tcf.publisherCountryCode,
            "vendor_consents": ranges(tcf.vendorConsents),
            "vendor_legitimate_interests": ranges(tcf.vendorLegitimateInterests),
            "disclosed_vendors": tcf.disclosedVendors.map(ranges) ?? NSNull(),
            "publisher_restrictions": tcf.publisherRestrictions.map { restriction in
                [
                    "purpose": restriction.purpose, "type": "\(restriction.type)",
                    "vendors": ranges(restriction.vendors),
                ] as [String: Any]
            },
        ]
    }

    static func usPrivacyJSON(_ us: USPrivacyString) -> [String: Any] {
        [
            "version": us.version, "notice": String(us.notice.rawValue),
            "opt_out_sale": String(us.optOutSale.rawValue), "lspa_covered": String(us.lspaCovered.rawValue),
        ]
    }

    static func usNationalJSON(_ national: USNationalSection) -> [String: Any] {
        [
            "version": national.version, "sale_opt_out": national.saleOptOut,
            "sharing_opt_out": national.sharingOptOut,
            "targeted_advertising_opt_out": national.targetedAdvertisingOptOut,
            "sensitive_data_processing": national.sensitiveDataProcessing,
            "known_child_sensitive_data_consents": national.knownChildSensitiveDataConsents,
            "gpc": national.gpc.map { $0 as Any } ?? NSNull(),
        ]
    }

    /// The decoded signals as JSON.
    static func signalsJSON(_ decoded: DecodedPrivacy) -> [String: Any] {
        let signals = decoded.signals
        var gpp: Any = NSNull()
        if let string = decoded.gpp {
            var sections: [String: Any] = [:]
            for id in string.sectionIDs {
                switch id {
                case 2: sections["2"] = string.tcfEU.map(tcfJSON) ?? NSNull()
                case 6: sections["6"] = string.usPrivacy.map(usPrivacyJSON) ?? NSNull()
                case 7: sections["7"] = string.usNational.map(usNationalJSON) ?? NSNull()
                default: sections["\(id)"] = "not decoded (kept as text)"
                }
            }
            gpp =
                [
                    "section_ids": string.sectionIDs, "sections": sections,
                    "section_errors": Dictionary(
                        uniqueKeysWithValues: string.sectionErrors.map { ("\($0.key)", $0.value.description) }),
                ] as [String: Any]
        }
        return [
            "gdpr": signals.gdprApplies.map { $0 as Any } ?? NSNull(), "gdpr_applies": decoded.gdprApplies,
            "gpp_sid": signals.gppSectionIDs, "tcf": decoded.tcf.map(tcfJSON) ?? NSNull(),
            "tcf_error": decoded.malformedTCF ?? NSNull(),
            "us_privacy": decoded.usPrivacy.map(usPrivacyJSON) ?? NSNull(),
            "us_national": decoded.usNational.map(usNationalJSON) ?? NSNull(), "gpp": gpp,
            "gpp_error": decoded.gppError.map { $0.description } ?? NSNull(), "malformed": decoded.malformed,
            "coppa": signals.coppa, "under_age": signals.underAgeOfConsent, "lmt": signals.limitAdTracking,
            "att": signals.appTracking.map { "\($0)" } ?? NSNull(),
        ]
    }

    /// The human listing: the signals, then one line per network.
    static func text(_ decoded: DecodedPrivacy, decisions: [Decision]) -> [String] {
        var lines: [String] = []
        let signals = decoded.signals
        let given = signals.gdprApplies.map { $0 ? "1" : "0" } ?? "not given"
        lines.append(
            "gdpr applies: \(decoded.gdprApplies ? "yes" : "no") (gdpr \(given), gpp_sid \(signals.gppSectionIDs))")
        if let tcf = decoded.tcf {
            lines.append(
                "tcf: v\(tcf.version) policy \(tcf.policyVersion), cmp \(tcf.cmpID), purposes consented "
                    + "\(tcf.purposeConsents), legitimate interest \(tcf.purposeLegitimateInterests), special features "
                    + "\(tcf.specialFeatureOptIns)\(tcf.purposeOneTreatment ? ", purpose one treatment" : "")")
            lines.append("  vendor consents \(ranges(tcf.vendorConsents))")
            lines.append("  vendor legitimate interests \(ranges(tcf.vendorLegitimateInterests))")
            if let disclosed = tcf.disclosedVendors { lines.append("  disclosed vendors \(ranges(disclosed))") }
            for restriction in tcf.publisherRestrictions {
                lines.append(
                    "  publisher restriction: purpose \(restriction.purpose) \(restriction.type) for "
                        + ranges(restriction.vendors))
            }
        } else if let invalid = decoded.malformedTCF {
            lines.append("tcf: \(invalid)")
        }
        if let us = decoded.usPrivacy {
            lines.append(
                "us privacy: notice \(us.notice.rawValue), opt-out of sale \(us.optOutSale.rawValue), lspa "
                    + "\(us.lspaCovered.rawValue)")
        }
        if let gpp = decoded.gpp {
            lines.append("gpp: sections \(gpp.sectionIDs)")
        }
        if let national = decoded.usNational {
            lines.append(
                "us national: sale opt-out \(national.saleOptOut), sharing opt-out \(national.sharingOptOut), "
                    + "targeted advertising opt-out \(national.targetedAdvertisingOptOut), gpc "
                    + (national.gpc.map { "\($0)" } ?? "absent"))
        }
        for reason in decoded.malformed { lines.append("malformed: \(reason)") }
        for decision in decisions {
            let vendor = decision.vendor.map { " (tcf vendor \($0))" } ?? ""
            if let reason = decision.verdict.blockedReason {
                lines.append("\(decision.network)\(vendor): privacy_blocked: \(reason)")
            } else {
                let restrictions = decision.verdict.reasons
                lines.append(
                    "\(decision.network)\(vendor): asked"
                        + (restrictions.isEmpty ? "" : ", restricted: \(restrictions.joined(separator: "; "))"))
            }
        }
        return lines
    }
}
