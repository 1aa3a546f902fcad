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

    /// One network's decision: `{"network", "type", "tcf_vendor_id", "asked", "reason", "restrictions",
    /// "permissions": {"device_ids", "user_ids", "precise_geo", "personalized_ads"}}`.
    struct Decision: Encodable, Sendable {
        var network: String
        var type: String?
        var vendor: Int?
        var verdict: PrivacyVerdict

        enum CodingKeys: String, CodingKey {
            case network, type, asked, reason, restrictions, permissions
            case vendor = "tcf_vendor_id"
        }

        /// The keys of `permissions`.
        enum PermissionKeys: String, CodingKey {
            case deviceIDs = "device_ids"
            case userIDs = "user_ids"
            case preciseGeo = "precise_geo"
            case personalizedAds = "personalized_ads"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(network, forKey: .network)
            try container.encode(type, forKey: .type)
            try container.encode(vendor, forKey: .vendor)
            try container.encode(verdict.mayBeAsked, forKey: .asked)
            try container.encode(verdict.blockedReason.map { "privacy_blocked: \($0)" }, forKey: .reason)
            try container.encode(verdict.mayBeAsked ? verdict.reasons : [], forKey: .restrictions)
            let permissions = verdict.permissions
            var nested = container.nestedContainer(keyedBy: PermissionKeys.self, forKey: .permissions)
            try nested.encode(permissions.deviceIDs, forKey: .deviceIDs)
            try nested.encode(permissions.userIDs, forKey: .userIDs)
            try nested.encode(permissions.preciseGeo, forKey: .preciseGeo)
            try nested.encode(permissions.personalizedAds, forKey: .personalizedAds)
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
            print(ReportJSON.text(ConsentReport(signals: decoded, networks: decisions)))
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
