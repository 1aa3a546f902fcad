import AdMediation
import AdMediationTesting
import AdNetworkConformance
import AdPrivacy
import AdTransport
import AppOpenAds
import ChartboostBanners
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatAds
import MARSAds
import OpenRTBBidder
import TestSupport
import Testing

// The privacy matrix (issue 34 item 5): combinations of GDPR, TCF consent, US signals, child status and tracking
// status, each sent through the mediator to each of the five networks over real loopback HTTP, every request
// recorded on the wire. `expectation(_:_:)` is written from the texts, not from the library's rule table:
// - TCF v2 policy: under GDPR a vendor may process only for purposes it has a legal basis for; purpose 1 (store or
//   access information on a device) needs consent, purpose 2 (basic ads) consent or legitimate interest; a
//   publisher restriction "not allowed" removes the basis; TCF v2.3: a vendor not in the disclosed-vendors segment
//   was not disclosed to the user, so it has no basis; purposes 3 and 4 (personalised ads profile) need consent.
//   No valid TC string under GDPR: no basis at all.
// - COPPA (16 CFR 312, persistent identifiers are personal information of a child) and the under-age flag: no
//   identifier of any kind, no personalisation.
// - CCPA/CPRA opt-out of sale and sharing (US Privacy `1YYN`; GPP US National opt-outs, GPC, known-child
//   consents): no identifiers, no personalisation.
// - Apple ATT "denied" and the platform's limit-ad-tracking: no advertising id, no cross-app user id.
// - Malformed and conflicting signals (issue 44): a US Privacy string that is not one (`1yyn`: the IAB's format is a
//   version digit and three upper-case flags) may be the opt-out it meant to carry, so it counts as one (fail
//   closed); a GPP section 7 opt-out counts beside a section 6 that does not decode (GPP: sections are encoded and
//   read one by one); `gpp_sid` listing section 2 (the EU TCF) makes GDPR apply even with `gdpr=0` (the stricter);
//   a TC string given without `gdpr` makes GDPR apply (a CMP writes one only where it showed the TCF).
// Each combination goes through the mediator and, for every other one, to the network alone through the privacy
// gate the CLI's single-network paths use (`PrivacyGatedNetwork`): both must agree with the table.

/// One network of the matrix, with the TCF vendor id it declares.
struct PrivacyNetwork: Sendable, CustomStringConvertible {
    var name: String
    var vendor: Int
    var format: AdFormat
    var placement: String
    var description: String { name }

    static let all = [
        PrivacyNetwork(name: "growthcat", vendor: 901, format: .interstitial, placement: "level_complete"),
        PrivacyNetwork(name: "mars", vendor: 902, format: .tile, placement: "mock_tile_1"),
        PrivacyNetwork(name: "chartboost", vendor: 903, format: .banner(.standard), placement: "Main Menu"),
        PrivacyNetwork(name: "appopen", vendor: 904, format: .appOpen, placement: "ca-app-pub-sandbox/app_open_main"),
        PrivacyNetwork(name: "openrtb", vendor: 905, format: .banner(.standard), placement: "main_banner"),
    ]
}

/// The TC strings of the matrix.
enum TCFCase: CaseIterable, Sendable {
    case none, invalid, allConsent, purpose1Refused, purpose2ByInterest, profileRefused, vendorsRefused
    case marsUndisclosed, chartboostRestricted

    static let everyVendor: Set<Int> = [901, 902, 903, 904, 905]

    var string: String? {
        var tcf = TCFTestString()
        tcf.purposeConsents = Set(1...10)
        tcf.vendorConsents = Self.everyVendor
        tcf.specialFeatureOptIns = [1]
        switch self {
        case .none: return nil
        case .invalid: return "not-a-tc-string"
        case .allConsent: break
        case .purpose1Refused: tcf.purposeConsents = Set(2...10)
        case .purpose2ByInterest:
            tcf.purposeConsents = [1]
            tcf.purposeLegitimateInterests = [2]
            tcf.vendorLegitimateInterests = Self.everyVendor
        case .profileRefused: tcf.purposeConsents = [1, 2]
        case .vendorsRefused: tcf.vendorConsents = [902, 903, 904]
        case .marsUndisclosed: tcf.disclosedVendors = [901, 903, 904, 905]
        case .chartboostRestricted: tcf.restrictions = [(purpose: 2, type: 0, vendors: [903])]
        }
        return tcf.encoded
    }
}

/// The US signals of the matrix.
enum USCase: CaseIterable, Sendable {
    case none, uspNoOptOut, uspOptOut, nationalNoOptOut, nationalOptOut, uspMalformed, nationalBesideBrokenSection

    var usPrivacy: String? {
        switch self {
        case .uspNoOptOut: "1YNN"
        case .uspOptOut: "1YYN"
        case .uspMalformed: "1yyn"
        default: nil
        }
    }

    /// GPP strings with section 7 only (header `DBABLA`); the sections are the IAB's fixtures: `BVVqAAEABCA.QA`
    /// opts out of nothing, `BVVVkkkklWA.YA` (iabgpp-java UsNatTest) opts out of sale, sharing and targeting, with
    /// GPC and a known-child "no consent".
    var gpp: String? {
        switch self {
        case .nationalNoOptOut: "DBABLA~BVVqAAEABCA.QA"
        case .nationalOptOut: "DBABLA~BVVVkkkklWA.YA"
        // Sections 6 and 7 (header `DBACTY`): a US Privacy section of five characters, then the opt-out above.
        case .nationalBesideBrokenSection: "DBACTY~1YNNN~BVVVkkkklWA.YA"
        default: nil
        }
    }
}

/// One combination of the matrix.
struct PrivacyCombination: Sendable {
    var gdpr: Bool?
    /// `gpp_sid` lists section 2 (the EU TCF) too, whatever `gdpr` says.
    var listsSection2 = false
    var tcf: TCFCase
    var us: USCase
    var coppa: Bool
    var underAge: Bool
    var att: AppTrackingStatus?
    var lmt: Bool

    var signals: PrivacySignals {
        var signals = PrivacySignals(
            gdprApplies: gdpr, tcfConsent: tcf.string, usPrivacy: us.usPrivacy, gpp: us.gpp,
            gppSectionIDs: (listsSection2 ? [2] : []) + (us.gpp == nil ? [] : [7]), coppa: coppa,
            underAgeOfConsent: underAge)
        signals.appTracking = att
        signals.limitAdTracking = lmt
        return signals
    }

    /// Every combination: GDPR 4 (unknown, 0, 1, 0 with `gpp_sid` listing 2) × TCF 9 × US 7 × child 3 × tracking 4
    /// = 3024.
    static let all: [PrivacyCombination] = {
        var all: [PrivacyCombination] = []
        for (gdpr, listsSection2) in [(nil, false), (false, false), (true, false), (false, true)] as [(Bool?, Bool)] {
            for tcf in TCFCase.allCases {
                for us in USCase.allCases {
                    for child in 0..<3 {
                        for tracking in 0..<4 {
                            all.append(
                                PrivacyCombination(
                                    gdpr: gdpr, listsSection2: listsSection2, tcf: tcf, us: us, coppa: child == 1,
                                    underAge: child == 2,
                                    att: [nil, .authorized, .denied, nil][tracking], lmt: tracking == 3))
                        }
                    }
                }
            }
        }
        return all
    }()
}

/// What a network must (not) receive for a combination.
struct PrivacyExpectation: Equatable {
    var asked: Bool
    var deviceID: Bool
    var userID: Bool
}

/// The expectation table, from the texts above (not from `PrivacyRules`).
func expectation(_ combination: PrivacyCombination, _ network: PrivacyNetwork) -> PrivacyExpectation {
    // GDPR applies when `gdpr` is 1, and when it is not given but a TC string is (a CMP writes one only where it
    // showed the TCF: read the stricter way, issue 44 item 2).
    let gdpr =
        combination.gdpr == true || combination.listsSection2
        || (combination.gdpr == nil && combination.tcf.string != nil)
    var legalBasis = true
    var profile = true
    if gdpr {
        switch combination.tcf {
        case .none, .invalid, .purpose1Refused: legalBasis = false
        case .vendorsRefused: legalBasis = ![901, 905].contains(network.vendor)
        case .marsUndisclosed: legalBasis = network.vendor != 902
        case .chartboostRestricted: legalBasis = network.vendor != 903
        case .purpose2ByInterest, .profileRefused: profile = false
        case .allConsent: break
        }
    }
    guard legalBasis else { return PrivacyExpectation(asked: false, deviceID: false, userID: false) }
    let child = combination.coppa || combination.underAge
    let optedOut = [.uspOptOut, .nationalOptOut, .uspMalformed, .nationalBesideBrokenSection].contains(combination.us)
    let notTracking = combination.att == .denied || combination.lmt
    let identifiers = !child && !optedOut && !notTracking
    return PrivacyExpectation(asked: true, deviceID: identifiers, userID: identifiers && profile)
}

@Suite("Privacy matrix: every combination through the mediator to every network", .timeLimit(.minutes(2)))
struct PrivacyMatrixTests {
    /// Every third combination of the 3024 (1008): each value of every dimension still appears with every other.
    static let combinations = PrivacyCombination.all.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)

    static let deviceID = "IFA-SECRET-0000"
    static let userID = "USER-SECRET-1111"

    @Test("no identifier leaks and every network is skipped exactly where the expectation table says")
    func matrix() async throws {
        #expect(Self.combinations.count >= 1000)
        let sandbox = try await DemandSandbox.start(scenario: SandboxScenario(seed: 1))
        let curl = CurlHTTPClient()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("privacy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let started = ContinuousClock.now
        let counts = try await withThrowingTaskGroup(of: [String: Int].self) { group in
            for network in PrivacyNetwork.all {
                group.addTask { try await Self.run(network, sandbox: sandbox, curl: curl, directory: directory) }
            }
            var total: [String: Int] = [:]
            for try await counts in group { total.merge(counts, uniquingKeysWith: +) }
            return total
        }
        await curl.shutdown()
        await sandbox.shutdown()
        let elapsed = ContinuousClock.now - started
        print(
            "privacy matrix: \(Self.combinations.count) combinations × \(PrivacyNetwork.all.count) networks = "
                + "\(counts["cases", default: 0]) cases; asked \(counts["asked", default: 0]), "
                + "privacy_blocked \(counts["blocked", default: 0]), ifa sent \(counts["ifa", default: 0]), "
                + "user id sent \(counts["user", default: 0]), leaks \(counts["leaks", default: 0]); alone through the "
                + "gate \(counts["alone", default: 0]) cases, blocked \(counts["aloneBlocked", default: 0]), "
                + "in \(elapsed)"
        )
        #expect(counts["cases"] == Self.combinations.count * PrivacyNetwork.all.count)
        #expect(counts["leaks", default: 0] == 0)
        #expect(counts["mismatches", default: 0] == 0)
    }

    /// Sends every combination to `network` through its own mediator, in order, and checks each request's text.
    static func run(
        _ network: PrivacyNetwork, sandbox: RunningSandbox, curl: CurlHTTPClient, directory: URL
    ) async throws -> [String: Int] {
        let wire = RecordingHTTPClient(wrapping: curl)
        let adapter = try makeAdapter(network, sandbox: sandbox, http: wire, directory: directory)
        let placement = PlacementConfiguration(
            format: network.format,
            // Loopback requests to the sandbox: hang guards, the rule is what is on the wire.
            lines: [WaterfallLine(network: adapter.id, placement: network.placement, timeout: HangGuard.request)],
            deadline: HangGuard.request)
        // OpenRTB declares its vendor id itself; the others through the mediator's configuration.
        let vendors = network.name == "openrtb" ? [:] : [adapter.id: network.vendor]
        let mediator = try Mediator(
            networks: [adapter],
            configuration: MediationConfiguration(
                placements: ["p": placement], circuitBreaker: CircuitBreakerConfiguration(failureThreshold: 1000)),
            privacy: PrivacyConfiguration(tcfVendorIDs: vendors))
        // The CLI's single-network path: the same network behind the privacy gate, with the same vendor id.
        let alone = PrivacyGatedNetwork(adapter, configuration: PrivacyConfiguration(tcfVendorIDs: vendors))
        var counts: [String: Int] = [:]
        for (index, combination) in combinations.enumerated() {
            let expected = expectation(combination, network)
            let before = wire.requestCount
            let request = AdRequest(
                placement: "p", format: network.format, userID: userID, privacy: combination.signals)
            let outcome = await mediator.loadWithTrace(request)
            (try? outcome.result.get())?.ad?.invalidate()
            // A bidder's win or loss notice is sent in the background after the answer, so one may land among the
            // next combination's requests: only the ad requests themselves are this combination's.
            let sent = wire.requestTexts.dropFirst(before).filter { !$0.contains("/notice/") }.joined(separator: "\n")
            counts["cases", default: 0] += 1
            let line = outcome.trace.lines.first
            let blocked = line?.outcome == .skipped(.privacyBlocked)
            if blocked { counts["blocked", default: 0] += 1 }
            if !sent.isEmpty { counts["asked", default: 0] += 1 }
            if sent.contains(deviceID) { counts["ifa", default: 0] += 1 }
            if sent.contains(userID) { counts["user", default: 0] += 1 }
            var problems: [String] = []
            if expected.asked == sent.isEmpty { problems.append("asked \(!sent.isEmpty), expected \(expected.asked)") }
            if blocked == expected.asked || (blocked && line?.privacyReason == nil) {
                problems.append("trace \(String(describing: line?.outcome)) \(line?.privacyReason ?? "")")
            }
            let leaked =
                (sent.contains(deviceID) && !expected.deviceID) || (sent.contains(userID) && !expected.userID)
            if leaked { counts["leaks", default: 0] += 1 }
            problems += forwarded(combination, network, expected, sent)
            if !problems.isEmpty || leaked {
                counts["mismatches", default: 0] += 1
                Issue.record("\(network) \(combination): \(problems) leaked=\(leaked)")
            }
            if index % 2 == 0 {
                counts["alone", default: 0] += 1
                try await checkAlone(alone, network, combination, expected, wire: wire, counts: &counts)
            }
        }
        if let rtb = adapter as? BiddingNetwork { await rtb.shutdown() }
        return counts
    }

    /// One combination sent to `network` alone through the privacy gate: asked exactly where the table says (a block
    /// throws `privacy_blocked`), and no identifier the table forbids on the wire.
    static func checkAlone(
        _ alone: PrivacyGatedNetwork, _ network: PrivacyNetwork, _ combination: PrivacyCombination,
        _ expected: PrivacyExpectation, wire: RecordingHTTPClient, counts: inout [String: Int]
    ) async throws {
        let before = wire.requestCount
        let request = AdRequest(
            placement: network.placement, format: network.format, userID: userID, privacy: combination.signals,
            timeout: HangGuard.request)
        var blocked = false
        do {
            (try await alone.load(request)).ad?.invalidate()
        } catch let error as AdError where error.code == .privacyBlocked {
            blocked = true
            counts["aloneBlocked", default: 0] += 1
        } catch {
            // A network error is not this test's concern; what reached the wire still is.
        }
        let sent = wire.requestTexts.dropFirst(before).filter { !$0.contains("/notice/") }.joined(separator: "\n")
        let leaked = (sent.contains(deviceID) && !expected.deviceID) || (sent.contains(userID) && !expected.userID)
        if leaked { counts["leaks", default: 0] += 1 }
        if blocked == expected.asked || expected.asked == sent.isEmpty || leaked {
            counts["mismatches", default: 0] += 1
            Issue.record("alone \(network) \(combination): blocked \(blocked), sent \(!sent.isEmpty) leaked=\(leaked)")
        }
    }

    /// The fields each contract carries, checked on the wire (only for a network that was asked).
    static func forwarded(
        _ combination: PrivacyCombination, _ network: PrivacyNetwork, _ expected: PrivacyExpectation, _ sent: String
    ) -> [String] {
        guard expected.asked, !sent.isEmpty else { return [] }
        var problems: [String] = []
        func require(_ text: String?, _ name: String) {
            if let text, !sent.contains(text) { problems.append("\(name) missing") }
        }
        if let gpp = combination.signals.gpp { require(gpp, "gpp") }
        if network.name != "mars" {
            require(combination.tcf.string, "tcf")
            require(combination.us.usPrivacy, "us_privacy")
        }
        // The identifiers the table allows do reach the networks that carry them.
        if network.name == "openrtb" {
            if expected.deviceID != sent.contains(deviceID) { problems.append("ifa \(sent.contains(deviceID))") }
            if expected.deviceID == sent.contains("\"lmt\":1") { problems.append("lmt") }
            if let att = combination.att, !sent.contains("\"atts\":\(att.rawValue)") { problems.append("atts") }
        }
        if network.name == "growthcat", expected.userID != sent.contains(userID) {
            problems.append("app_user_id \(sent.contains(userID))")
        }
        return problems
    }

    static func makeAdapter(
        _ network: PrivacyNetwork, sandbox: RunningSandbox, http: any HTTPClient, directory: URL
    ) throws -> any AdNetwork {
        switch network.name {
        case "growthcat":
            var configuration = GrowthCatClient.Configuration(
                apiKey: "gc_test_demo", baseURL: sandbox.growthcatBaseURL,
                eventQueuePath: directory.appendingPathComponent("q.sqlite").path)
            configuration.catalogCaching = false
            // A live sandbox: hang guards, not the 10 s request and 15 s reward validation defaults.
            configuration.requestTimeout = HangGuard.request
            configuration.rewardValidationTimeout = HangGuard.request
            return GrowthCatNetwork(client: try GrowthCatClient(configuration: configuration, http: http))
        case "mars":
            return MarsNetwork(
                client: MozAdsClientBuilder(httpClient: http).environment(.custom(baseURL: sandbox.marsBaseURL))
                    .build())
        case "chartboost":
            return ChartboostNetwork(
                configuration: .init(
                    baseURL: sandbox.chartboostBaseURL, appID: "cb_app_demo", appSignature: "cb_sig_demo_secret"),
                http: http)
        case "appopen":
            return AppOpenNetwork(configuration: .init(baseURL: sandbox.appOpenBaseURL), http: http)
        default:
            var configuration = BiddingNetwork.Configuration(baseURL: sandbox.bidderBaseURL("privacy"))
            configuration.advertisingID = deviceID
            configuration.tcfVendorID = network.vendor
            configuration.noticeAttempts = 1
            return BiddingNetwork(configuration: configuration, http: http)
        }
    }
}

extension PrivacyCombination: CustomStringConvertible {
    var description: String {
        "gdpr=\(gdpr.map(String.init) ?? "-")\(listsSection2 ? " sid2" : "") tcf=\(tcf) us=\(us) coppa=\(coppa) "
            + "underAge=\(underAge) "
            + "att=\(att.map { "\($0)" } ?? "-") lmt=\(lmt)"
    }
}
