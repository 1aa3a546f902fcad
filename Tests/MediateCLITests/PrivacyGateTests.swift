import DemandSandbox
import Foundation
import OpenRTBSandbox
import TestSupport
import Testing

/// Issue 44 item 4, one privacy gate for every path an adapter can be called from: each of the CLI's entry points
/// (its subcommands, as `mediate --help` lists them) is run against a demand sandbox over real loopback HTTP under
/// GDPR without a TC string, and the sandbox counts what reached it.
///
/// The rule (IAB Europe TCF v2.2 Policies, "Purposes": Purpose 1, "Store and/or access information on a device",
/// may only be relied on with the user's consent, and Purpose 2 needs consent or legitimate interest): where GDPR
/// applies and no TC string carries either, a network must not be asked at all (the rules' row "gdpr, no string").
@Suite("mediate: one privacy gate for every entry point", .serialized, .timeLimit(.minutes(5)))
struct PrivacyGateTests {
    /// Every way a subcommand can ask a network, with the arguments that make it ask the sandbox config's `ao`
    /// (app-open) network: the waterfall, the network alone, the kit.
    static let paths: [String: [[String]]] = [
        "load": [["load", "--placement", "launch"], ["load", "--placement", "launch", "--network", "ao"]],
        "compare": [["compare", "--placement", "launch", "--requests", "3", "--quiet", "--format", "json"]],
        "show": [["show", "--placement", "launch"]],
        "conformance": [["conformance", "--network", "ao"]],
        // The inspector asks no network, and must not: it reports the same gate's decision.
        "consent": [["consent"]],
    ]

    /// Subcommands that ask no network, and why.
    static let asksNoNetwork: [String: String] = [
        "sandbox": "serves the demand sandbox; it calls no adapter",
        "list": "prints the configuration; it calls no adapter",
    ]

    /// The subcommands `mediate --help` lists.
    static func subcommands() async throws -> Set<String> {
        let run = try await mediate(["--help"])
        var names: Set<String> = []
        var inList = false
        for line in run.out.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("SUBCOMMANDS:") {
                inList = true
                continue
            }
            guard inList else { continue }
            // "  compare (default)   Run N …": a command is indented by two spaces; a blank line ends the list.
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else {
                if line.trimmingCharacters(in: .whitespaces).isEmpty { break }
                continue
            }
            if let name = line.split(separator: " ").first { names.insert(String(name)) }
        }
        return names
    }

    @Test("every subcommand is either checked against the gate here or asks no network")
    func everyEntryPointIsCovered() async throws {
        let listed = try await Self.subcommands()
        #expect(listed.count >= 5, "the help lists the subcommands: \(listed)")
        let covered = Set(Self.paths.keys).union(Self.asksNoNetwork.keys)
        #expect(listed.subtracting(covered).isEmpty, "a new subcommand must be added to PrivacyGateTests.paths")
        #expect(covered.subtracting(listed).isEmpty, "a listed path names no subcommand: \(listed)")
    }

    /// Every invocation of ``paths``.
    static let invocations: [[String]] = paths.keys.sorted().flatMap { paths[$0] ?? [] }

    @Test(
        "under GDPR without a TC string, no entry point sends the network a request, and each says why",
        arguments: invocations)
    func gdprWithoutConsentSendsNothing(_ arguments: [String]) async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(arguments + ["--config", config, "--gdpr", "1"])
        let records = sandbox.records
        await sandbox.shutdown()
        // Everything but the admin API (conformance drives the sandbox through it).
        let sent = records.requestCounts.filter { !$0.key.contains(" /admin/") }
        #expect(sent.isEmpty, "\(arguments.joined(separator: " ")) reached the network: \(sent)")
        #expect(records.adRequestPrivacy.isEmpty, "\(records.adRequestPrivacy)")
        #expect(
            (run.out + run.err).contains("privacy_blocked: gdpr applies without a tcf string"),
            "the block is reported with its reason: \(run.out)\n\(run.err)")
    }

    @Test("with consent for purposes 1 and 2, the same entry points do reach the network (the gate lets it through)")
    func consentLetsTheNetworkBeAsked() async throws {
        // TCF v2 consent string with purposes 1 and 2 consented (the TCF v2 "Consent string and vendor list
        // formats" layout, built bit by bit by TCFTestString).
        var consent = TCFTestString()
        consent.purposeConsents = [1, 2]
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(
            [
                "load", "--placement", "launch", "--network", "ao", "--config", config, "--gdpr", "1", "--tcf",
                consent.encoded,
            ])
        let records = sandbox.records
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(records.adRequestPrivacy.count == 1, "\(records.adRequestPrivacy)")
    }
}

/// `tcf_vendor_id` in the CLI's configuration file reaches the privacy rules on every path (issue 44 item 1).
@Suite("mediate: a network's tcf_vendor_id from the file", .serialized, .timeLimit(.minutes(3)))
struct TCFVendorIDFileTests {
    /// `sandboxConfig` with `"tcf_vendor_id": id` on the app-open network `ao`.
    static func config(_ sandbox: RunningSandbox, vendorID: Int) throws -> String {
        let text = sandboxConfig(sandbox).replacingOccurrences(
            of: #""type": "appopen","#, with: #""type": "appopen", "tcf_vendor_id": \#(vendorID),"#)
        #expect(text.contains("tcf_vendor_id"))
        return try writeConfig(text)
    }

    /// A TC string consenting purposes 1 and 2 for vendors `vendors` only (TCF v2 core segment, TCFTestString).
    static func consent(vendors: Set<Int>) -> String {
        var consent = TCFTestString()
        consent.purposeConsents = [1, 2]
        consent.vendorConsents = vendors
        return consent.encoded
    }

    // TCF v2.2 Policies: a vendor relies on consent for purpose 1 only when the user consented to the purpose *and*
    // to that vendor (the TC string's VendorConsents section).
    @Test(
        "a network whose declared vendor has no vendor consent is not asked, on the waterfall and alone",
        arguments: [
            ["load", "--placement", "launch", "--json"], ["load", "--placement", "launch", "--network", "ao"],
        ])
    func vendorWithoutConsentIsBlocked(_ arguments: [String]) async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try Self.config(sandbox, vendorID: 755)
        let run = try await mediate(
            arguments + ["--config", config, "--gdpr", "1", "--tcf", Self.consent(vendors: [1, 2])])
        let records = sandbox.records
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(records.adRequestPrivacy.isEmpty, "\(records.adRequestPrivacy)")
        #expect(run.out.contains("privacy_blocked: tcf purpose 1 not consented for vendor 755"), "\(run.out)")
    }

    @Test("the same string consenting the declared vendor lets the network be asked")
    func vendorWithConsentIsAsked() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try Self.config(sandbox, vendorID: 755)
        let run = try await mediate(
            [
                "load", "--placement", "launch", "--config", config, "--gdpr", "1", "--tcf",
                Self.consent(vendors: [755]),
            ])
        let records = sandbox.records
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(records.adRequestPrivacy.count == 1, "\(records.adRequestPrivacy)")
    }

    @Test("a mistyped tcf_vendor_id key is refused, naming the nearest valid key")
    func mistypedKeySuggestsTheNearest() async throws {
        let sandbox = try await DemandSandbox.start()
        let text = sandboxConfig(sandbox).replacingOccurrences(
            of: #""type": "appopen","#, with: #""type": "appopen", "tcf_vendorid": 755,"#)
        await sandbox.shutdown()
        let run = try await mediate(["load", "--placement", "launch", "--config", try writeConfig(text)])
        #expect(run.code == 2)
        #expect(run.err.contains("networks.ao.tcf_vendorid"), "\(run.err)")
        #expect(run.err.contains(#"did you mean "tcf_vendor_id"?"#), "\(run.err)")
    }
}

/// Issue 44 item 3: a malformed signal is named by its field in what `load` reports, on the waterfall and alone.
@Suite("mediate load: malformed signals named in the trace", .serialized, .timeLimit(.minutes(3)))
struct MalformedSignalTraceTests {
    // IAB CCPA / US Privacy String specification: four characters, a version digit then `Y`, `N` or `-` each, in
    // upper case; `1yyn` is not a US Privacy string, and may be the very opt-out it was meant to carry.
    @Test(
        "an unreadable us_privacy is named with its value in each line's privacy restrictions",
        arguments: [["--json"], ["--json", "--network", "ao"]])
    func unreadableUSPrivacyIsNamed(_ extra: [String]) async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(
            ["load", "--placement", "launch", "--config", config, "--us-privacy", "1yyn", "--app-user-id", "u1"]
                + extra)
        let sent = sandbox.records.adRequestPrivacy
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let line = try #require((root["trace"] as? [[String: Any]])?.first)
        let restrictions = line["privacy"] as? [String] ?? []
        #expect(restrictions.contains(#"invalid us_privacy "1yyn" (invalid_field)"#), "\(line)")
        #expect(sent.count == 1, "the network is asked (stripped, not blocked): \(sent)")
    }

    @Test("a TC string that does not decode under GDPR blocks, and the reason names the field")
    func unreadableTCFIsNamed() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(
            ["load", "--placement", "launch", "--config", config, "--gdpr", "1", "--tcf", "CO??", "--json"])
        let sent = sandbox.records.adRequestPrivacy
        await sandbox.shutdown()
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let line = try #require((root["trace"] as? [[String: Any]])?.first)
        #expect((line["reason"] as? String)?.hasPrefix(#"privacy_blocked: gdpr applies, invalid tcf "CO??" ("#) == true)
        #expect(sent.isEmpty)
    }
}

/// Issue 44 item 7: `mediate consent`, the consent inspector.
@Suite("mediate consent", .serialized, .timeLimit(.minutes(3)))
struct ConsentInspectorTests {
    @Test("it prints the decoded TCF purposes and vendors and, per network, the gate's decision with its reason")
    func decodesAndDecides() async throws {
        // TCF v2 core segment (TCFTestString): purposes 1 and 2 consented, vendor 1 consented, not vendor 755.
        var consent = TCFTestString()
        consent.purposeConsents = [1, 2]
        consent.vendorConsents = [1]
        let sandbox = try await DemandSandbox.start()
        let config = try TCFVendorIDFileTests.config(sandbox, vendorID: 755)
        let run = try await mediate(
            ["consent", "--config", config, "--gdpr", "1", "--tcf", consent.encoded, "--us-privacy", "1yyn", "--json"])
        let sent = sandbox.records.requestCounts.filter { !$0.key.contains(" /admin/") }
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(sent.isEmpty, "the inspector sends no request: \(sent)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let signals = try #require(root["signals"] as? [String: Any])
        let tcf = try #require(signals["tcf"] as? [String: Any])
        #expect(tcf["purpose_consents"] as? [Int] == [1, 2])
        #expect(tcf["vendor_consents"] as? String == "[1]")
        #expect(signals["malformed"] as? [String] == [#"invalid us_privacy "1yyn" (invalid_field)"#])
        let networks = try #require(root["networks"] as? [[String: Any]])
        let ao = try #require(networks.first { $0["network"] as? String == "ao" })
        #expect(ao["asked"] as? Bool == false)
        #expect(ao["tcf_vendor_id"] as? Int == 755)
        #expect(ao["reason"] as? String == "privacy_blocked: tcf purpose 1 not consented for vendor 755")
        let cb = try #require(networks.first { $0["network"] as? String == "cb" })
        #expect(cb["asked"] as? Bool == true, "no vendor id declared: the purposes alone")
        #expect((cb["restrictions"] as? [String])?.contains(#"invalid us_privacy "1yyn" (invalid_field)"#) == true)
    }

    @Test("the text listing names each network's decision")
    func textListing() async throws {
        let sandbox = try await DemandSandbox.start()
        let config = try writeConfig(sandboxConfig(sandbox))
        let run = try await mediate(["consent", "--config", config, "--gdpr", "1"])
        await sandbox.shutdown()
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(run.out.contains("gdpr applies: yes"), "\(run.out)")
        #expect(run.out.contains("ao: privacy_blocked: gdpr applies without a tcf string"), "\(run.out)")
    }
}

/// Issue 44 item 6: `load` carries the ids an app would pass, so what each network receives is observable.
@Suite("mediate load: the app's ids under the privacy rules", .serialized, .timeLimit(.minutes(3)))
struct AppIDsOnTheWireTests {
    /// One OpenRTB bidder (its contract carries `device.ifa`) in front of a Chartboost-style banner line.
    static func config(_ sandbox: RunningSandbox) throws -> String {
        try writeConfig(
            """
            {"networks": {
               "rtb": {"type": "openrtb", "base_url": "\(sandbox.bidderBaseURL("rtb"))"},
               "cb": {"type": "chartboost", "base_url": "\(sandbox.chartboostBaseURL)", "app_id": "cb_app_demo", \
            "app_signature": "cb_sig_demo_secret"}},
             "placements": {
               "banner": {"format": "banner", "size": "320x50", "deadline_ms": 30000,
                          "bidders": [{"network": "rtb", "placement": "b", "timeout_ms": 30000}],
                          "lines": [{"network": "cb", "placement": "Main Menu", "timeout_ms": 30000}]}}}
            """)
    }

    func bidRequests(_ extra: [String]) async throws -> (code: Int32, sent: [String], err: String) {
        let sandbox = try await DemandSandbox.start()
        let run = try await mediate(
            ["load", "--placement", "banner", "--config", try Self.config(sandbox), "--advertising-id", "IFA-7777"]
                + extra)
        let sent = (sandbox.routes(OpenRTBRoutes.self)?.records.bidRequests ?? [])
        await sandbox.shutdown()
        return (run.code, sent, run.err)
    }

    @Test("--advertising-id reaches the bidder's device.ifa when nothing restricts it")
    func advertisingIDIsSent() async throws {
        let run = try await bidRequests([])
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(run.sent.count == 1 && run.sent.first?.contains("IFA-7777") == true, "\(run.sent)")
    }

    // IAB US Privacy (CCPA) string: `1YYN` is an opt-out of sale; with it, no device identifier goes out.
    @Test("a US Privacy opt-out keeps the advertising id off the wire, the request still sent")
    func optOutStripsTheAdvertisingID() async throws {
        let run = try await bidRequests(["--us-privacy", "1YYN"])
        #expect(run.code == 0, "stderr: \(run.err)")
        #expect(run.sent.count == 1, "\(run.sent)")
        #expect(run.sent.allSatisfy { !$0.contains("IFA-7777") }, "\(run.sent)")
    }
}
