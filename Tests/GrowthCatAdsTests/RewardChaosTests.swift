import AdMediation
import AdMediationTesting
import AdPrivacy
import CurlTransport
import DemandSandbox
import Foundation
import Logging
import TestSupport
import Testing

@testable import GrowthCatAds

/// Issue 43 item 7: rewarded views against the demand sandbox across consent states, load orders, video lengths around
/// the minimum, what the user does on the ad, and faults on the reward validation (docs/RELIABILITY.md, "Rewards under
/// chaos").
@Suite("GrowthCat reward chaos", .timeLimit(.minutes(10)))
struct RewardChaosTests {
    /// `REWARD_CHAOS_RUNS=N` scales the run: at least N × 1 000 rewarded views (default 1).
    static var scale: Int {
        max(1, ProcessInfo.processInfo.environment["REWARD_CHAOS_RUNS"].flatMap { Int($0) } ?? 1)
    }

    /// The sandbox's rewarded placements: 15 s minimum, videos shorter, as long and longer.
    struct Placement: Sendable {
        var key: String
        var lengthMs: Int
        var amount: Double
    }

    static let placements = [
        Placement(key: "rewarded_short", lengthMs: 10_000, amount: 20),
        Placement(key: "rewarded_exact", lengthMs: 15_000, amount: 30),
        Placement(key: "rewarded_coins", lengthMs: 30_000, amount: 50),
    ]
    static let minimumMs = 15_000

    /// Consent states, among them every one whose rules keep user ids out of ad requests and events.
    static let consents: [(name: String, signals: PrivacySignals)] = {
        var states: [(String, PrivacySignals)] = [("no signals", PrivacySignals())]
        for status in AppTrackingStatus.allCases {
            var signals = PrivacySignals()
            signals.appTracking = status
            states.append(("ATT \(status)", signals))
        }
        var lmt = PrivacySignals()
        lmt.limitAdTracking = true
        states.append(("limit ad tracking", lmt))
        // TCF under GDPR: purposes 3 and 4 (personalised ads profile) refused; basic ads by consent or by legitimate
        // interest.
        var profileRefused = TCFTestString()
        profileRefused.purposeConsents = [1, 2]
        profileRefused.vendorConsents = [901]
        var basicByInterest = TCFTestString()
        basicByInterest.purposeConsents = [1]
        basicByInterest.purposeLegitimateInterests = [2]
        basicByInterest.vendorLegitimateInterests = [901]
        states.append(("TCF 3/4 refused", PrivacySignals(gdprApplies: true, tcfConsent: profileRefused.encoded)))
        states.append(
            ("TCF 3/4 refused, 2 by LI", PrivacySignals(gdprApplies: true, tcfConsent: basicByInterest.encoded)))
        states.append(("US Privacy opt-out", PrivacySignals(usPrivacy: "1YYN")))
        states.append(
            ("GPP US National opt-out", PrivacySignals(gpp: "DBABLA~BVVVkkkklWA.YA", gppSectionIDs: [7])))
        states.append(("COPPA", PrivacySignals(coppa: true)))
        states.append(("under age", PrivacySignals(underAgeOfConsent: true)))
        return states
    }()

    /// The orders of loads and shows.
    enum Order: String, CaseIterable, Sendable {
        /// Load, then the user does something else for a minute, then show.
        case loadThenShow
        /// Show as soon as the load returns.
        case showRightAfterLoad
        /// Load two ahead, then show both (the second loaded before the first one's reward was validated).
        case twoAheadThenShowBoth
        /// `prefetchAdCatalogs` first (the seed: on foreground), then load and show.
        case prefetchThenLoadAndShow
    }

    /// What the user (and the player) do on the ad.
    enum Watch: String, CaseIterable, Sendable {
        /// Watches to the end and stays past the minimum (0, 0.5 or 3 s more), then closes.
        case staysPastMinimum
        /// Taps close the moment it shows (for a video shorter than the minimum: at its end).
        case closesWhenTheButtonShows
        /// Playback stalls 4 s after 5 s; the user watches to the end and stays past the minimum.
        case stallsThenStays
        /// Leaves (close refused, or at the end card) 1–14 s in.
        case leavesEarly
        /// On the ad for the minimum less half a second.
        case leavesHalfASecondBeforeTheMinimum
        /// The video fails before the minimum; the user closes.
        case failsBeforeTheMinimum
        /// The video fails 2 s after the minimum (a video longer than that; the others stay).
        case failsAfterTheMinimum
    }

    /// The viewer's timeline, in milliseconds on the ad.
    struct Viewer: Sendable {
        var lengthMs: Int
        var stallAt: Int?
        var stallMs = 0
        var failAt: Int?
        var leaveAt: Int
        var closesWhenVisible = false

        static func make(_ watch: Watch, lengthMs: Int, rng: inout SplitMix64) -> Viewer {
            let minimum = RewardChaosTests.minimumMs
            switch watch {
            case .staysPastMinimum:
                let extra = [0, 500, 3000][Int.random(in: 0..<3, using: &rng)]
                return Viewer(lengthMs: lengthMs, leaveAt: max(lengthMs, minimum) + extra)
            case .closesWhenTheButtonShows:
                return Viewer(lengthMs: lengthMs, leaveAt: 120_000, closesWhenVisible: true)
            case .stallsThenStays:
                return Viewer(
                    lengthMs: lengthMs, stallAt: 5000, stallMs: 4000, leaveAt: max(lengthMs + 4000, minimum) + 1000)
            case .leavesEarly:
                return Viewer(lengthMs: lengthMs, leaveAt: 1000 * Int.random(in: 1...14, using: &rng))
            case .leavesHalfASecondBeforeTheMinimum:
                return Viewer(lengthMs: lengthMs, leaveAt: minimum - 500)
            case .failsBeforeTheMinimum:
                let failAt = 1000 * Int.random(in: 2...(min(lengthMs, minimum) / 1000 - 1), using: &rng)
                return Viewer(lengthMs: lengthMs, failAt: failAt, leaveAt: failAt + 1000)
            case .failsAfterTheMinimum:
                guard lengthMs > minimum + 2000 else { return make(.staysPastMinimum, lengthMs: lengthMs, rng: &rng) }
                return Viewer(lengthMs: lengthMs, failAt: minimum + 2000, leaveAt: minimum + 3000)
            }
        }

        /// Plays the timeline through `controls`, moving `clock`; returns whether the view reached its minimum — the
        /// test's own oracle: on the ad for the minimum with the minimum played (or the video ended), before any
        /// failure.
        func play(_ controls: FullScreenControls, clock: ManualAdClock) async -> Bool {
            let minimum = RewardChaosTests.minimumMs
            await controls.renderBegan()
            await controls.playbackStarted()
            var t = 0, played = 0
            var ended = false, failed = false, stalled = false, reached = false
            while t < 120_000 {
                let playing = !ended && !failed && !stalled
                let moments = [
                    stallAt, stallAt.map { $0 + stallMs }, failAt, leaveAt, playing ? t + lengthMs - played : nil,
                ]
                let next = moments.compactMap { $0 }.filter { $0 > t }.reduce(t + 1000 - t % 1000) { min($0, $1) }
                await clock.advance(by: .milliseconds(next - t))
                if playing { played = min(lengthMs, played + next - t) }
                t = next
                if playing && played >= lengthMs {
                    await controls.playbackProgressed(to: .milliseconds(played))
                    await controls.playbackEnded()
                    ended = true
                } else if playing {
                    await controls.playbackProgressed(to: .milliseconds(played))
                } else {
                    await controls.refresh()
                }
                if !failed && t >= minimum && (played >= minimum || ended) { reached = true }
                if t == stallAt && !ended {
                    stalled = true
                    await controls.playbackStalled()
                }
                if let stallAt, t == stallAt + stallMs && stalled {
                    stalled = false
                    await controls.playbackResumed()
                }
                if t == failAt && !ended {
                    failed = true
                    await controls.playbackFailed("chaos")
                }
                if closesWhenVisible, controls.state.closeVisible, await controls.closeTapped() { return reached }
                if t >= leaveAt {
                    _ = await controls.closeTapped()  // closed, or refused: the user leaves either way
                    return reached
                }
            }
            return reached
        }
    }

    /// One view of the plan.
    struct Plan: Sendable {
        var n: Int
        var placement: Placement
        var consent: Int
        var path: AdPathCase
        var order: Order
        var watch: Watch
        var viewer: Viewer
        var userID: String
        var rewardUserID: String?
        var sessionID: String
        /// The id the validation must carry: the app's account id for rewards.
        var accountID: String { rewardUserID ?? userID }
    }

    /// What became of one view.
    struct Outcome: Sendable {
        var plan: Plan
        var allocationID: String
        var token: String
        var reached: Bool
        var reward: AdReward?
        var validationFailed: Bool
        var log: String
    }

    /// Whether the viewer reached the minimum; nil while the viewer is still on the ad.
    final class ViewerOutcome: Sendable {
        let value = LockedValue<Bool?>(nil)
    }

    /// One lane: a client of its own (its own queue file and catalog cache) on its own presentation clock.
    struct Lane: Sendable {
        let client: GrowthCatClient
        let network: GrowthCatNetwork
        let clock: ManualAdClock
        let path: String
        var mediators: [String: [AdPathCase: Mediator]] = [:]

        init(sandbox: RunningSandbox, http: CurlHTTPClient) throws {
            path = queuePath()
            var configuration = GrowthCatClient.Configuration(
                apiKey: "gc_test_demo", baseURL: sandbox.growthcatBaseURL, eventQueuePath: path)
            configuration.logger = Logger(label: "admediation.growthcat") { _ in SwiftLogNoOpLogHandler() }
            // "Answers after the client's timeout": the sandbox answers a late validation after 1.5 s.
            configuration.requestTimeout = .seconds(1)
            configuration.retryBaseDelay = .milliseconds(2)
            configuration.maxRetryDelay = .milliseconds(50)
            configuration.offlineProbeInterval = .milliseconds(100)
            configuration.mediaCacheDirectory = nil
            // The client's back-off and validation budget run on the system clock (milliseconds here, as in
            // DeliveryChaosTests); the time on the ad runs on the lane's manual clock.
            client = try GrowthCatClient(configuration: configuration, http: http)
            clock = ManualAdClock()
            network = GrowthCatNetwork(client: client, clock: clock)
            for placement in RewardChaosTests.placements {
                let lines: [String: PlacementConfiguration] = [
                    "m": PlacementConfiguration(
                        format: .interstitial, lines: [WaterfallLine(network: network.id, placement: placement.key)])
                ]
                let quiet = Logger(label: "admediation.mediator") { _ in SwiftLogNoOpLogHandler() }
                let inner = try Mediator(
                    id: "m", networks: [network], configuration: .init(placements: lines), clock: clock, logger: quiet)
                let outer = try Mediator(
                    id: "outer", networks: [inner],
                    configuration: .init(placements: [
                        "m": PlacementConfiguration(
                            format: .interstitial, lines: [WaterfallLine(network: "m", placement: "m")])
                    ]), clock: clock, logger: quiet)
                mediators[placement.key] = [.mediated: inner, .nested: outer]
            }
        }

        /// One ad of the plan's placement by the plan's path (the app asks again, up to three times, when a load
        /// fails).
        func load(_ plan: Plan) async -> LoadedAd? {
            let privacy = RewardChaosTests.consents[plan.consent].signals
            for _ in 0..<3 {
                var request = AdRequest(
                    placement: plan.placement.key, format: .interstitial, userID: plan.userID,
                    sessionID: plan.sessionID,
                    privacy: privacy)
                request.rewardUserID = plan.rewardUserID
                let ad: LoadedAd?
                switch plan.path {
                case .bare:
                    ad = try? await network.load(request).ad
                case .mediated, .nested:
                    request.placement = "m"
                    ad = try? await mediators[plan.placement.key]?[plan.path]?.load(request).ad
                }
                if let ad { return ad }
            }
            return nil
        }

        /// Presents `ad` to the plan's viewer and returns once the presentation is over. Once the viewer is done, the
        /// presentation waits for the validation (the client's clock) and gives the final flush its grace on the
        /// lane's clock: that clock moves only when something has slept on it for a while (bounded in real time).
        func present(_ ad: LoadedAd, _ plan: Plan) async throws -> (FullScreenResult, Bool) {
            let reached = ViewerOutcome()
            let clock = self.clock, viewer = plan.viewer
            let task = Task {
                try await ad.presentFullScreen(
                    on: ScriptPresenter { controls in
                        let outcome = await viewer.play(controls, clock: clock)
                        reached.value.withLock { $0 = outcome }
                    }, clock: clock)
            }
            let watcher = Task {
                let deadline = ContinuousClock.now + .seconds(60)
                var idleSince: ContinuousClock.Instant?
                while !Task.isCancelled && ContinuousClock.now < deadline {
                    if reached.value.withLock({ $0 }) != nil && clock.sleeperCount > 0 {
                        let now = ContinuousClock.now
                        if let since = idleSince, now - since > .milliseconds(250) {
                            await clock.advance(by: .seconds(1))
                            idleSince = nil
                        } else if idleSince == nil {
                            idleSince = now
                        }
                    } else {
                        idleSince = nil
                    }
                    try? await Task.sleep(for: .milliseconds(5))
                }
                if !Task.isCancelled { task.cancel() }  // past the deadline: fail, not hang
            }
            defer { watcher.cancel() }
            let result = try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
            return (result, reached.value.withLock { $0 } ?? false)
        }
    }

    /// The plan: rounds of one order each (one or two views), every dimension drawn from `rng`.
    static func plan(views: Int, rng: inout SplitMix64) -> [[Plan]] {
        var rounds: [[Plan]] = []
        var n = 0
        while n < views {
            let order = Order.allCases[Int.random(in: 0..<Order.allCases.count, using: &rng)]
            let placement = placements[Int.random(in: 0..<placements.count, using: &rng)]
            let consent = Int.random(in: 0..<consents.count, using: &rng)
            let path = AdPathCase.allCases[Int.random(in: 0..<AdPathCase.allCases.count, using: &rng)]
            var round: [Plan] = []
            for _ in 0..<(order == .twoAheadThenShowBoth ? 2 : 1) {
                let watch = Watch.allCases[Int.random(in: 0..<Watch.allCases.count, using: &rng)]
                let viewer = Viewer.make(watch, lengthMs: placement.lengthMs, rng: &rng)
                round.append(
                    Plan(
                        n: n, placement: placement, consent: consent, path: path, order: order, watch: watch,
                        viewer: viewer, userID: "user-\(n)", rewardUserID: n % 3 == 0 ? "account-\(n)" : nil,
                        sessionID: "s-\(n)"))
                n += 1
            }
            rounds.append(round)
        }
        return rounds
    }

    /// Runs one round on `lane`: its loads and shows in the round's order.
    static func run(_ round: [Plan], on lane: Lane) async throws -> (outcomes: [Outcome], loadFailures: Int) {
        guard let first = round.first else { return ([], 0) }
        if first.order == .prefetchThenLoadAndShow {
            await lane.client.prefetchAdCatalogs(
                placementKeys: [first.placement.key], privacy: consents[first.consent].signals)
        }
        var loaded: [(Plan, LoadedAd?)] = []
        var outcomes: [Outcome] = []
        var loadFailures = 0
        func show(_ plan: Plan, _ ad: LoadedAd?) async throws {
            guard let ad else {
                loadFailures += 1
                return
            }
            let served = ad.adapterData as? GrowthCatAd
            let (result, reached) = try await lane.present(ad, plan)
            let failed = result.log.contains {
                if case .rewardFailed = $0.kind { return true }
                return false
            }
            outcomes.append(
                Outcome(
                    plan: plan, allocationID: served?.allocationID ?? "?", token: served?.token ?? "?",
                    reached: reached, reward: result.reward, validationFailed: failed,
                    log: result.log.map(\.description).joined(separator: "; ")))
        }
        switch first.order {
        case .twoAheadThenShowBoth:
            for plan in round { loaded.append((plan, await lane.load(plan))) }
            for (plan, ad) in loaded { try await show(plan, ad) }
        case .loadThenShow:
            let ad = await lane.load(first)
            await lane.clock.advance(by: .seconds(60))
            try await show(first, ad)
        case .showRightAfterLoad, .prefetchThenLoadAndShow:
            try await show(first, await lane.load(first))
        }
        return (outcomes, loadFailures)
    }

    /// The reward chaos test. Every view that reached its minimum on the ad is validated exactly once (one
    /// `sdk_event_id`, its token granted once by the server) and the app gets its reward; no view that did not is
    /// granted; no token is granted twice or handed to two loads — under 503s, resets, answers lost after the server
    /// granted, and answers after the client's timeout, on every consent state, order, path and video length.
    @Test func everyViewThatReachedItsMinimumIsGrantedExactlyOnceUnderValidationFaults() async throws {
        let views = 1000 * Self.scale
        let laneCount = 12
        var rng = SplitMix64(seed: 0x5EED_0043)
        let rounds = Self.plan(views: views, rng: &rng)
        var growthcat = NetworkScenario()
        growthcat.validationFaults = [
            ValidationFault(.status, rate: 0.10, status: 503), ValidationFault(.reset, rate: 0.06),
            ValidationFault(.lostAnswer, rate: 0.08), ValidationFault(.lateAnswer, rate: 0.05, delayMs: 1500),
        ]
        growthcat.maxValidationFaults = 2
        let sandbox = try await DemandSandbox.start(
            scenario: SandboxScenario(seed: 0x5EED_0043, networks: ["growthcat": growthcat]))
        let http = CurlHTTPClient()
        var lanes: [Lane] = []
        for _ in 0..<laneCount { lanes.append(try Lane(sandbox: sandbox, http: http)) }
        let started = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: ([Outcome], Int).self) { group in
            for (index, lane) in lanes.enumerated() {
                let share = stride(from: index, to: rounds.count, by: laneCount).map { rounds[$0] }
                group.addTask {
                    var outcomes: [Outcome] = []
                    var failures = 0
                    for round in share {
                        let (some, failed) = try await Self.run(round, on: lane)
                        outcomes += some
                        failures += failed
                    }
                    return (outcomes, failures)
                }
            }
            var all: ([Outcome], Int) = ([], 0)
            for try await part in group { all = (all.0 + part.0, all.1 + part.1) }
            return all
        }
        let elapsed = ContinuousClock.now - started
        let outcomes = results.0.sorted { $0.plan.n < $1.plan.n }
        let records = sandbox.growthcatRecords
        let byAllocation = Dictionary(grouping: records.rewardValidations, by: \.allocationID)

        // Coverage: every consent state, order, path, length and behaviour was shown.
        #expect(outcomes.count + results.1 >= views)
        #expect(results.1 <= views / 100, "\(results.1) loads failed three times")
        #expect(Set(outcomes.map(\.plan.consent)).count == Self.consents.count)
        #expect(Set(outcomes.map(\.plan.order)) == Set(Order.allCases))
        #expect(Set(outcomes.map(\.plan.path)) == Set(AdPathCase.allCases))
        #expect(Set(outcomes.map(\.plan.placement.key)) == Set(Self.placements.map(\.key)))
        #expect(Set(outcomes.map(\.plan.watch)) == Set(Watch.allCases))
        for kind in ValidationFault.Kind.allCases {
            #expect(records.rewardValidationFaults[kind.rawValue, default: 0] > 0, "\(kind) was injected")
        }

        // One token, one fill.
        let tokens = outcomes.map(\.token)
        #expect(!tokens.contains("?"), "every ad is a GrowthCat ad")
        #expect(Set(tokens).count == tokens.count, "no token handed to two loads")

        // No token granted twice, and nothing validated but the views' own ads (a prefetched ad is never shown).
        let viewAllocations = Set(outcomes.map(\.allocationID))
        for (allocation, attempts) in byAllocation {
            let grants = attempts.filter { $0.validated && !$0.replayed }.count
            #expect(grants <= 1, "\(allocation) granted \(grants) times")
            #expect(viewAllocations.contains(allocation), "\(allocation) validated, but no view showed it")
        }

        var problems: [String] = []
        for outcome in outcomes {
            let attempts = byAllocation[outcome.allocationID] ?? []
            let grants = attempts.filter { $0.validated && !$0.replayed }.count
            let ids = Set(attempts.compactMap(\.sdkEventID))
            let plan = outcome.plan
            let what =
                "view \(plan.n) \(plan.placement.key) \(plan.watch) \(plan.order) \(plan.path) "
                + "\(Self.consents[plan.consent].name): \(outcome.log)"
            if outcome.reached {
                let expected = AdReward(name: "Coins", amount: plan.placement.amount)
                if outcome.reward != expected {
                    problems.append("reached, rewarded \(String(describing: outcome.reward)): \(what)")
                }
                if grants != 1 || ids.count != 1 {
                    problems.append("reached, \(grants) grants for \(ids.count) validations: \(what)")
                }
                if attempts.contains(where: { $0.viewedSeconds < Double(Self.minimumMs / 1000) }) {
                    problems.append("reached, a claim below the minimum: \(what)")
                }
                if attempts.contains(where: { $0.appUserID != plan.accountID }) {
                    problems.append("reached, validated for another user id: \(what)")
                }
            } else {
                if outcome.reward != nil { problems.append("not reached, rewarded: \(what)") }
                if grants != 0 { problems.append("not reached, granted by the server: \(what)") }
            }
            if ids.count > 1 { problems.append("\(ids.count) validations of one view: \(what)") }
        }
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.prefix(20).joined(separator: "\n"))")

        let reached = outcomes.filter(\.reached)
        let granted = outcomes.filter { $0.reward != nil }.count
        let serverGrants = records.rewardValidations.filter { $0.validated && !$0.replayed }.count
        let validations = Set(records.rewardValidations.compactMap(\.sdkEventID)).count
        let faults = records.rewardValidationFaults
        let unprocessed = faults["status", default: 0] + faults["reset", default: 0]
        let attempts = records.rewardValidations.count + unprocessed
        let refused = records.rewardValidations.filter { !$0.validated && !$0.replayed }.count
        let failedViews = outcomes.filter(\.validationFailed).count
        print(
            "reward chaos: \(outcomes.count) views (\(results.1) loads failed), \(reached.count) reached the minimum, "
                + "\(granted) rewarded (\(serverGrants) server grants), \(outcomes.count - reached.count) did not "
                + "(\(refused) claims refused by the server), \(validations) validations in \(attempts) attempts "
                + "(\(attempts - validations) retries, \(records.rewardValidations.filter(\.replayed).count) answered "
                + "again by sdk_event_id), \(failedViews) validations failed on the client; faults: "
                + ValidationFault.Kind.allCases.map { "\($0.rawValue) \(faults[$0.rawValue, default: 0])" }
                .joined(separator: ", ") + "; \(laneCount) lanes, \(elapsed)")
        func breakdown<Key: Hashable>(_ key: (Outcome) -> Key, _ name: (Key) -> String, _ order: [Key]) -> String {
            let groups = Dictionary(grouping: outcomes, by: key)
            return order.map { value in
                let group = groups[value] ?? []
                let rewarded = group.filter { $0.reward != nil }.count
                return "\(name(value)) \(group.count)/\(group.filter(\.reached).count)/\(rewarded)"
            }.joined(separator: ", ")
        }
        print(
            "reward chaos, views/reached/rewarded by video: "
                + breakdown(\.plan.placement.key, { $0 }, Self.placements.map(\.key)) + "; by behaviour: "
                + breakdown(\.plan.watch, \.rawValue, Watch.allCases))
        for lane in lanes {
            await lane.client.shutdown()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: lane.path + suffix) }
        }
        await http.shutdown()
        await sandbox.shutdown()
    }
}
