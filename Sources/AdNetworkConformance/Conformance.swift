import AdMediation
import AdTransport
import Foundation
import Synchronization

/// A conformance scenario's failure: which scenario, what was expected, what happened.
public struct ConformanceFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The scenario's name.
    public var scenario: String
    /// What the rule requires.
    public var expectation: String
    /// What the network did.
    public var observed: String

    /// Creates a failure.
    public init(scenario: String, expectation: String, observed: String) {
        self.scenario = scenario
        self.expectation = expectation
        self.observed = observed
    }

    /// `"privacySignalsReachTheWire: expected …; observed …"`.
    public var description: String { "\(scenario): expected \(expectation); observed \(observed)" }
}

/// The network under test and the requests that exercise it.
public struct ConformanceSubject: Sendable {
    /// The network under test.
    public var network: any AdNetwork
    /// What reached the network's wire (a ``RecordingHTTPClient`` the adapter sends through, or the network itself).
    public var wire: any WireProbe
    /// A request the network fills.
    public var fillRequest: AdRequest
    /// A request the network answers with no fill, if one is known.
    public var noFillRequest: AdRequest?
    /// A request the network fails, and the error code it must fail with, if one is known.
    public var failingRequest: (request: AdRequest, code: AdError.Code)?
    /// A request that takes at least one second to answer (for cancellation and timeout scenarios), if known.
    public var slowRequest: AdRequest?
    /// The privacy fields the network's contract carries (default: TCF, US privacy and GPP strings).
    public var privacyFields: Set<PrivacyField>
    /// How long to watch for work that continues after a call returned. Default 150 ms.
    public var quietPeriod: Duration
    /// The subject's loads go through a mediator, which settles the auction of the ad it returns (a bidder's win
    /// notice is then on the wire right after the load): the event scenarios let that pass before they watch.
    var settlesOnLoad = false

    /// A privacy field a contract may carry.
    public enum PrivacyField: String, Sendable, Hashable, CaseIterable {
        /// The TCF consent string.
        case tcfConsent = "tcf"
        /// The US privacy string.
        case usPrivacy = "us_privacy"
        /// The GPP string.
        case gpp
    }

    /// Describes a subject.
    public init(
        network: any AdNetwork,
        wire: any WireProbe,
        fillRequest: AdRequest,
        noFillRequest: AdRequest? = nil,
        failingRequest: (request: AdRequest, code: AdError.Code)? = nil,
        slowRequest: AdRequest? = nil,
        privacyFields: Set<PrivacyField> = [.tcfConsent, .usPrivacy, .gpp],
        quietPeriod: Duration = .milliseconds(150)
    ) {
        self.network = network
        self.wire = wire
        self.fillRequest = fillRequest
        self.noFillRequest = noFillRequest
        self.failingRequest = failingRequest
        self.slowRequest = slowRequest
        self.privacyFields = privacyFields
        self.quietPeriod = quietPeriod
    }
}

/// How an ad reaches the app in a scenario: the network's own load, through a `Mediator` whose only line is the
/// network, or through a `Mediator` that is the only line of another.
public enum ConformancePath: String, Sendable, Hashable, CaseIterable {
    /// The network's own ad.
    case bare
    /// Through a `Mediator`.
    case mediated
    /// Through a `Mediator` nested in another.
    case nested

    /// A `Mediator` over `network` whose placement `conformance` is `placement`, and for `.nested` that mediator as
    /// the only line of another (10 s line timeout and deadline), both on `clock`.
    static func mediator(
        _ path: ConformancePath, over network: any AdNetwork, placement: PlacementConfiguration, clock: any AdClock
    ) throws -> Mediator {
        let inner = try Mediator(
            id: "conformance-mediator", networks: [network],
            configuration: MediationConfiguration(placements: ["conformance": placement]), clock: clock)
        guard path == .nested else { return inner }
        let outer = PlacementConfiguration(
            format: placement.format,
            lines: [WaterfallLine(network: inner.id, placement: "conformance", timeout: .seconds(10))],
            deadline: .seconds(10))
        return try Mediator(
            id: "conformance-outer", networks: [inner],
            configuration: MediationConfiguration(placements: ["conformance": outer]), clock: clock)
    }
}

extension ConformanceSubject {
    /// The same subject with every load going by `path`: the fill request becomes a mediated placement (id
    /// `conformance`, the fill request's format) whose only line is the network at the fill request's placement (10 s
    /// line timeout and deadline, so the kit, not the mediator, judges time). Only the fill request is kept: the
    /// other requests' rules are the network's own. Throws the mediator's configuration error.
    public func through(_ path: ConformancePath) throws -> ConformanceSubject {
        guard path != .bare else { return self }
        let line = WaterfallLine(
            network: network.id, placement: fillRequest.placement, timeout: .seconds(10))
        let placement = PlacementConfiguration(format: fillRequest.format, lines: [line], deadline: .seconds(10))
        let mediator = try ConformancePath.mediator(
            path, over: network, placement: placement, clock: SystemAdClock())
        var request = fillRequest
        request.placement = "conformance"
        var subject = ConformanceSubject(
            network: mediator, wire: wire, fillRequest: request, privacyFields: privacyFields, quietPeriod: quietPeriod)
        subject.settlesOnLoad = true
        return subject
    }
}

/// The result of one scenario in ``AdNetworkConformance/runAll(_:)``.
public struct ConformanceResult: Sendable {
    /// The scenario's name.
    public var scenario: String
    /// Passed, failed, or skipped (the subject lacks the request the scenario needs).
    public var status: Status
    /// The outcome of a scenario.
    public enum Status: Sendable, Hashable {
        /// The rule holds.
        case passed
        /// The rule is broken.
        case failed(ConformanceFailure)
        /// Not run, with the reason.
        case skipped(String)
    }
}

/// The conformance kit: one function per rule of `AdNetwork`. Each throws ``ConformanceFailure`` when the rule
/// is broken; none imports a test framework, so call them from Swift Testing (`try await …`), XCTest, or the CLI.
///
/// The two timing rules (cancellation within 100 ms, a 200 ms timeout within 300 ms) add twice the *scheduler slack*
/// to their bound: how late this machine wakes a sleeping task or thread, measured just before and just after the
/// measurement (``measureSchedulerSlack(samples:)``). On an idle machine the slack is a fraction of a millisecond and
/// the bound is the rule's; on a busy CI machine it grows by what the machine measurably lost, so the kit fails an
/// adapter, not a scheduler. A stall between the two measurements is not seen by them, so an attempt that misses its
/// bound is measured again, at most three times: an adapter that ignores cancellation or its timeout misses every
/// time. A failure message states the slack it allowed.
public enum AdNetworkConformance {
    /// How late this machine runs work right now: the largest overshoot of `samples` 2 ms sleeps, of a task on the
    /// cooperative pool and of a plain thread.
    public static func measureSchedulerSlack(samples: Int = 8) async -> Duration {
        let clock = ContinuousClock()
        var worst = Duration.zero
        for _ in 0..<samples {
            let start = clock.now
            try? await Task.sleep(for: .milliseconds(2))
            worst = max(worst, clock.now - start - .milliseconds(2))
        }
        let threadWorst: Duration = await withCheckedContinuation { continuation in
            Thread {
                var worst = Duration.zero
                for _ in 0..<samples {
                    let start = clock.now
                    usleep(2000)
                    worst = max(worst, clock.now - start - .milliseconds(2))
                }
                continuation.resume(returning: worst)
            }.start()
        }
        return max(worst, threadWorst)
    }

    /// Runs `body` between two slack measurements and returns its value with the larger slack.
    static func withSlack<T>(_ body: () async throws -> T) async rethrows -> (value: T, slack: Duration) {
        let before = await measureSchedulerSlack()
        let value = try await body()
        let after = await measureSchedulerSlack()
        return (value, max(before, after))
    }

    /// Every scenario with its name, in order.
    public static let scenarios: [(name: String, run: @Sendable (ConformanceSubject) async throws -> Void)] = [
        ("fillIsWellFormed", fillIsWellFormed),
        ("noFillIsAValue", noFillIsAValue),
        ("errorsMapToTheTaxonomy", errorsMapToTheTaxonomy),
        ("completionHappensExactlyOnce", completionHappensExactlyOnce),
        ("cancellationIsHonouredPromptly", cancellationIsHonouredPromptly),
        ("timeoutsAreHonoured", timeoutsAreHonoured),
        ("noEventsBeforeLoadOrAfterInvalidation", noEventsBeforeLoadOrAfterInvalidation),
        ("impressionIsReportedOncePerShow", impressionIsReportedOncePerShow),
        ("privacySignalsReachTheWire", privacySignalsReachTheWire),
        ("concurrentLoadsAreSafe", concurrentLoadsAreSafe),
        ("everyRequestCarriesADestinationRule", everyRequestCarriesADestinationRule),
    ]

    /// The scenarios about a loaded ad's events, which hold however the ad reached the app: ``runAll(_:)`` runs them
    /// on the adapter's bare ad, through a `Mediator` and through a `Mediator` nested in another
    /// (``ConformanceSubject/through(_:)``).
    public static let eventScenarios: [(name: String, run: @Sendable (ConformanceSubject) async throws -> Void)] = [
        ("noEventsBeforeLoadOrAfterInvalidation", noEventsBeforeLoadOrAfterInvalidation),
        ("impressionIsReportedOncePerShow", impressionIsReportedOncePerShow),
    ]

    /// How many results ``runAll(_:)`` gives: every scenario on the bare network, and the event scenarios again
    /// through a mediator and through a nested one.
    public static var resultCount: Int { scenarios.count + 2 * eventScenarios.count }

    /// Runs every scenario on the network, then the event scenarios through a `Mediator` and through a nested one
    /// (named `"… (mediated)"` and `"… (nested)"`); scenarios whose request the subject lacks are skipped.
    public static func runAll(_ subject: ConformanceSubject) async -> [ConformanceResult] {
        var results = await run(scenarios, on: subject)
        for path in [ConformancePath.mediated, .nested] {
            let named = eventScenarios.map { (name: "\($0.name) (\(path.rawValue))", run: $0.run) }
            do {
                results += await run(named, on: try subject.through(path))
            } catch {
                let failure = { (name: String) in
                    ConformanceFailure(scenario: name, expectation: "a mediator over the network", observed: "\(error)")
                }
                results += named.map { ConformanceResult(scenario: $0.name, status: .failed(failure($0.name))) }
            }
        }
        return results
    }

    /// Runs `scenarios` in order on `subject`: a ``ConformanceFailure`` fails its scenario (or skips it, with the skip
    /// marker), any other error fails it as unexpected. Shared by every scenario list of the kit.
    static func run<Subject>(
        _ scenarios: [(name: String, run: @Sendable (Subject) async throws -> Void)], on subject: Subject
    ) async -> [ConformanceResult] {
        var results: [ConformanceResult] = []
        for (name, run) in scenarios {
            do {
                try await run(subject)
                results.append(ConformanceResult(scenario: name, status: .passed))
            } catch let failure as ConformanceFailure where failure.expectation == skipMarker {
                results.append(ConformanceResult(scenario: name, status: .skipped(failure.observed)))
            } catch let failure as ConformanceFailure {
                results.append(ConformanceResult(scenario: name, status: .failed(failure)))
            } catch {
                let failure = ConformanceFailure(
                    scenario: name, expectation: "no unexpected error", observed: "\(error)")
                results.append(ConformanceResult(scenario: name, status: .failed(failure)))
            }
        }
        return results
    }

    static let skipMarker = "(skipped)"

    private static func skip(_ scenario: String, _ why: String) -> ConformanceFailure {
        ConformanceFailure(scenario: scenario, expectation: skipMarker, observed: why)
    }

    /// Every HTTP request the adapter sent during the kit's scenarios (loads, events, notices, assets) carried its
    /// network's destination rule (`HTTPRequest.destination`), so the transport holds every URL that
    /// came from outside to the network's policy, at every redirect hop. Runs last, after one more fill and its
    /// impression.
    @Sendable public static func everyRequestCarriesADestinationRule(_ subject: ConformanceSubject) async throws {
        let name = "everyRequestCarriesADestinationRule"
        if let ad = try? await subject.network.load(subject.fillRequest).ad {
            _ = try? await ad.report(.impression)
            ad.invalidate()
        }
        try await Task.sleep(for: subject.quietPeriod)  // background pings
        let unruled = subject.wire.requestsWithoutDestinationRule
        if let first = unruled.first {
            throw ConformanceFailure(
                scenario: name, expectation: "a destination rule on every request (HTTPRequest.destination)",
                observed: "\(unruled.count) request(s) without one, the first to \(first)")
        }
    }

    /// Rule 1: a fill is well formed.
    @Sendable public static func fillIsWellFormed(_ subject: ConformanceSubject) async throws {
        let name = "fillIsWellFormed"
        let ad = try await requireFill(subject, name)
        defer { ad.invalidate() }
        func fail(_ expectation: String, _ observed: String) -> ConformanceFailure {
            ConformanceFailure(scenario: name, expectation: expectation, observed: observed)
        }
        if !(subject.network is Mediator), ad.networkID != subject.network.id {
            throw fail("the ad's networkID to be \"\(subject.network.id)\"", "\"\(ad.networkID)\"")
        }
        if ad.placement != subject.fillRequest.placement {
            throw fail("the ad's placement to be \"\(subject.fillRequest.placement)\"", "\"\(ad.placement)\"")
        }
        if ad.format.name != subject.fillRequest.format.name {
            throw fail("the ad's format to be \(subject.fillRequest.format.name)", ad.format.name)
        }
        if ad.creative.id.isEmpty { throw fail("a non-empty creative id", "an empty id") }
        if let ecpm = ad.ecpm, !(ecpm.isFinite && ecpm >= 0) { throw fail("a finite, non-negative eCPM", "\(ecpm)") }
        if let expiry = ad.expiresAt, expiry <= ad.loadedAt {
            throw fail("an expiry after the load time", "expiresAt \(expiry) <= loadedAt \(ad.loadedAt)")
        }
        if ad.isInvalidated || !ad.reportedEvents.isEmpty {
            throw fail(
                "a fresh ad (not invalidated, no events)", "invalidated=\(ad.isInvalidated) events=\(ad.reportedEvents)"
            )
        }
    }

    /// Rule 2: no fill is returned as a value, never thrown.
    @Sendable public static func noFillIsAValue(_ subject: ConformanceSubject) async throws {
        let name = "noFillIsAValue"
        guard let request = subject.noFillRequest else { throw skip(name, "the subject has no no-fill request") }
        do {
            let result = try await subject.network.load(request)
            if let ad = result.ad {
                ad.invalidate()
                throw ConformanceFailure(scenario: name, expectation: "no fill", observed: "a fill (\(ad))")
            }
        } catch let failure as ConformanceFailure {
            throw failure
        } catch {
            throw ConformanceFailure(
                scenario: name, expectation: "a .noFill value", observed: "a thrown error: \(error)")
        }
    }

    /// Rule 3: failures are `AdError`s with the contract's code.
    @Sendable public static func errorsMapToTheTaxonomy(_ subject: ConformanceSubject) async throws {
        let name = "errorsMapToTheTaxonomy"
        guard let (request, code) = subject.failingRequest else {
            throw skip(name, "the subject has no failing request")
        }
        do {
            let result = try await subject.network.load(request)
            result.ad?.invalidate()
            throw ConformanceFailure(
                scenario: name, expectation: "an AdError \(code.name)",
                observed: "a result: \(result.ad.map { "\($0)" } ?? "no fill")")
        } catch let failure as ConformanceFailure {
            throw failure
        } catch let error as AdError {
            if error.code != code {
                throw ConformanceFailure(
                    scenario: name, expectation: "an AdError \(code.name)",
                    observed: "an AdError \(error.code.name): \(error.message)")
            }
        } catch {
            throw ConformanceFailure(
                scenario: name, expectation: "an AdError \(code.name)", observed: "a \(type(of: error)): \(error)")
        }
    }

    /// Rule 4: a load completes once, and no work continues on the wire after it returned.
    @Sendable public static func completionHappensExactlyOnce(_ subject: ConformanceSubject) async throws {
        let name = "completionHappensExactlyOnce"
        let ad = try await requireFill(subject, name)
        defer { ad.invalidate() }
        let after = subject.wire.requestCount
        let inFlight = subject.wire.requestsInFlight
        try await Task.sleep(for: subject.quietPeriod)
        let later = subject.wire.requestCount
        if inFlight > 0 || later != after {
            throw ConformanceFailure(
                scenario: name, expectation: "no wire activity after load returned",
                observed:
                    "\(inFlight) request(s) still in flight and \(later - after) new request(s) within "
                    + "\(Int(subject.quietPeriod.milliseconds)) ms"
            )
        }
    }

    /// Rule 5: cancelling the calling task ends the load within 100 ms, without a fill, and stops its I/O.
    @Sendable public static func cancellationIsHonouredPromptly(_ subject: ConformanceSubject) async throws {
        let name = "cancellationIsHonouredPromptly"
        guard var request = subject.slowRequest else { throw skip(name, "the subject has no slow request") }
        request.timeout = .seconds(10)
        // A busy machine can delay the cancel until the slow request has already answered, or stall the process for
        // longer than the bound around the cancel: such an attempt proves nothing either way, so it is run again (at
        // most three times). An adapter that ignores cancellation misses the bound every time.
        var missed: ConformanceFailure?
        for _ in 0..<3 {
            let before = subject.wire.requestCount
            let returned = Atomic<Bool>(false)
            let task = Task {
                defer { returned.store(true, ordering: .releasing) }
                return try await subject.network.load(request)
            }
            // Let the load reach the wire.
            for _ in 0..<200 where subject.wire.requestCount == before { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(20))
            let ((outcome, elapsed, answeredFirst), slack) = await withSlack {
                () async -> (Result<AdLoadResult, any Error>, Duration, Bool) in
                let start = ContinuousClock.now
                let answeredFirst = returned.load(ordering: .acquiring)
                task.cancel()
                let outcome = await task.result
                return (outcome, ContinuousClock.now - start, answeredFirst)
            }
            if answeredFirst {
                (try? outcome.get())?.ad?.invalidate()
                continue
            }
            let bound = Duration.milliseconds(100) + slack * 2
            if case .success(let result) = outcome, let ad = result.ad {
                ad.invalidate()
                throw ConformanceFailure(
                    scenario: name, expectation: "no fill after cancellation", observed: "a fill (\(ad))")
            }
            if case .failure(let error) = outcome, let adError = error as? AdError, adError.code != .cancelled {
                throw ConformanceFailure(
                    scenario: name, expectation: "AdError cancelled", observed: "AdError \(adError.code.name)")
            }
            if elapsed > bound {
                missed = ConformanceFailure(
                    scenario: name, expectation: "the load to end within 100 ms of cancellation",
                    observed:
                        "\(Int(elapsed.milliseconds)) ms (bound \(Int(bound.milliseconds)) ms: 100 + 2 × measured "
                        + "scheduler slack \(Int(slack.milliseconds.rounded(.up))) ms)"
                )
                continue
            }
            // The transfer underneath ends too (within the same bound).
            let settled = ContinuousClock.now
            while subject.wire.requestsInFlight > 0 && ContinuousClock.now - settled < bound {
                try await Task.sleep(for: .milliseconds(2))
            }
            if subject.wire.requestsInFlight > 0 {
                throw ConformanceFailure(
                    scenario: name, expectation: "no request in flight after cancellation",
                    observed: "\(subject.wire.requestsInFlight)")
            }
            return
        }
        if let missed { throw missed }
        throw ConformanceFailure(
            scenario: name, expectation: "a load still running when it is cancelled",
            observed: "the slow request answered before the cancel in 3 attempts (it should take at least 1 s)")
    }

    /// Rule 6: `request.timeout` bounds the load, which then throws `AdError/Code/timeout`.
    @Sendable public static func timeoutsAreHonoured(_ subject: ConformanceSubject) async throws {
        let name = "timeoutsAreHonoured"
        guard var request = subject.slowRequest else { throw skip(name, "the subject has no slow request") }
        request.timeout = .milliseconds(200)
        // A stall of the whole process (a busy machine) can push one attempt past the bound: the bound is checked
        // again on a new attempt (at most three). An adapter that ignores its timeout misses it every time; a wrong
        // outcome fails at once.
        var missed: ConformanceFailure?
        for _ in 0..<3 {
            let ((outcome, elapsed), slack) = await withSlack {
                () async -> (Result<AdLoadResult, any Error>, Duration) in
                let start = ContinuousClock.now
                let outcome: Result<AdLoadResult, any Error>
                do { outcome = .success(try await subject.network.load(request)) } catch { outcome = .failure(error) }
                return (outcome, ContinuousClock.now - start)
            }
            let bound = Duration.milliseconds(300) + slack * 2
            switch outcome {
            case .success(let result):
                result.ad?.invalidate()
                throw ConformanceFailure(
                    scenario: name, expectation: "AdError timeout after 200 ms",
                    observed: "a result after \(Int(elapsed.milliseconds)) ms")
            case .failure(let error):
                guard let adError = error as? AdError, adError.code == .timeout else {
                    throw ConformanceFailure(scenario: name, expectation: "AdError timeout", observed: "\(error)")
                }
            }
            guard elapsed > bound else { return }
            missed = ConformanceFailure(
                scenario: name, expectation: "the timeout within 300 ms of a 200 ms deadline",
                observed:
                    "\(Int(elapsed.milliseconds)) ms (bound \(Int(bound.milliseconds)) ms: 300 + 2 × measured "
                    + "scheduler slack \(Int(slack.milliseconds.rounded(.up))) ms)"
            )
        }
        if let missed { throw missed }
    }

    /// Rule 7: nothing is sent for an ad before an event is reported, and nothing after invalidation.
    @Sendable public static func noEventsBeforeLoadOrAfterInvalidation(_ subject: ConformanceSubject) async throws {
        let name = "noEventsBeforeLoadOrAfterInvalidation"
        let ad = try await requireFill(subject, name)
        // Through a mediator the auction was settled at load: its win notice goes first, in the background.
        let settled = subject.settlesOnLoad ? await quiet(subject) : subject.wire.requestCount
        if !ad.reportedEvents.isEmpty {
            ad.invalidate()
            throw ConformanceFailure(
                scenario: name, expectation: "no event reported by the adapter itself",
                observed: "events already reported at load: \(ad.reportedEvents.map(\.description).sorted())")
        }
        let afterLoad = settled
        try await Task.sleep(for: subject.quietPeriod)
        if subject.wire.requestCount != afterLoad || !ad.reportedEvents.isEmpty {
            ad.invalidate()
            throw ConformanceFailure(
                scenario: name, expectation: "no event sent before one is reported",
                observed: "\(subject.wire.requestCount - afterLoad) request(s) after the load")
        }
        ad.invalidate()
        let afterInvalidate = subject.wire.requestCount
        do {
            try await ad.report(.impression)
            throw ConformanceFailure(
                scenario: name, expectation: "reporting after invalidation to fail", observed: "it succeeded")
        } catch let error as AdError where error.code == .invalidState {
        }
        try await Task.sleep(for: subject.quietPeriod)
        if subject.wire.requestCount != afterInvalidate {
            throw ConformanceFailure(
                scenario: name, expectation: "nothing sent after invalidation",
                observed: "\(subject.wire.requestCount - afterInvalidate) request(s)")
        }
    }

    /// Rule 8: one impression per show: the first report sends at most one request, a repeat sends none.
    @Sendable public static func impressionIsReportedOncePerShow(_ subject: ConformanceSubject) async throws {
        let name = "impressionIsReportedOncePerShow"
        let ad = try await requireFill(subject, name)
        defer { ad.invalidate() }
        // Each count is read once the wire is quiet: a mediator's win notice (sent in the background when it settled
        // the auction at load) is never counted as the impression's.
        let before = await quiet(subject)
        let first = try await ad.report(.impression)
        let afterFirst = await quiet(subject)
        let second = try await ad.report(.impression)
        let afterSecond = await quiet(subject)
        if !first || second {
            throw ConformanceFailure(
                scenario: name, expectation: "the first report to send and the second not",
                observed: "first=\(first) second=\(second)")
        }
        if afterFirst - before > 1 || afterSecond != afterFirst {
            throw ConformanceFailure(
                scenario: name, expectation: "at most one wire request for one impression, none for a repeat",
                observed: "\(afterFirst - before) for the first, \(afterSecond - afterFirst) for the repeat")
        }
    }

    /// Waits until the subject's wire has been still for its quiet period (see ``quiet(_:period:bound:)``), at most
    /// 10 s; returns the request count.
    static func quiet(_ subject: ConformanceSubject) async -> Int {
        await quiet(subject.wire, period: subject.quietPeriod, bound: .seconds(10))
    }

    /// Waits until `wire` has been still for `period` — plus four times the scheduler slack measured now, so a ping
    /// queued in the background on a busy machine is not mistaken for the next step's — with nothing in flight, at
    /// most `bound`; returns the request count. Shared by the network and the bidder scenarios.
    static func quiet(_ wire: any WireProbe, period: Duration, bound: Duration) async -> Int {
        let window = period + (await measureSchedulerSlack()) * 4
        let clock = ContinuousClock()
        let end = clock.now + bound
        var count = wire.requestCount
        var stillSince = clock.now
        while clock.now < end {
            try? await Task.sleep(for: .milliseconds(10))
            let now = wire.requestCount
            if now != count {
                count = now
                stillSince = clock.now
            }
            if clock.now - stillSince >= window && wire.requestsInFlight == 0 { break }
        }
        return wire.requestCount
    }

    /// Rule 9: every privacy signal the contract carries reaches the wire.
    @Sendable public static func privacySignalsReachTheWire(_ subject: ConformanceSubject) async throws {
        let name = "privacySignalsReachTheWire"
        let marker = UUID().uuidString.prefix(8)
        var request = subject.fillRequest
        // GDPR not applying (`gdpr=0`, and no GPP section 2 listed, which would make it apply): the strings are
        // markers, not valid consent, and under GDPR the privacy rules rightly skip a network whose TC string does not
        // decode.
        request.privacy = PrivacySignals(
            gdprApplies: false, tcfConsent: "CPTCF\(marker)", usPrivacy: "1YNN", gpp: "DBABGPP\(marker)",
            gppSectionIDs: [6, 7])
        let before = subject.wire.requestCount
        let result = try await subject.network.load(request)
        result.ad?.invalidate()
        let texts = subject.wire.requestTexts.dropFirst(before).joined(separator: "\n")
        var missing: [String] = []
        if subject.privacyFields.contains(.tcfConsent), !texts.contains("CPTCF\(marker)") {
            missing.append("TCF consent string")
        }
        if subject.privacyFields.contains(.usPrivacy), !texts.contains("1YNN") { missing.append("US privacy string") }
        if subject.privacyFields.contains(.gpp), !texts.contains("DBABGPP\(marker)") { missing.append("GPP string") }
        if !missing.isEmpty {
            throw ConformanceFailure(
                scenario: name, expectation: "the privacy signals on the wire",
                observed: "missing: \(missing.joined(separator: ", "))")
        }
    }

    /// Rule 10: concurrent loads each get their own answer, without errors.
    @Sendable public static func concurrentLoadsAreSafe(_ subject: ConformanceSubject) async throws {
        let name = "concurrentLoadsAreSafe"
        let outcomes = await withTaskGroup(of: Result<AdLoadResult, any Error>.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    do { return .success(try await subject.network.load(subject.fillRequest)) } catch {
                        return .failure(error)
                    }
                }
            }
            var all: [Result<AdLoadResult, any Error>] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        var ads: [LoadedAd] = []
        var errors: [String] = []
        for outcome in outcomes {
            switch outcome {
            case .success(let result): if let ad = result.ad { ads.append(ad) }
            case .failure(let error): errors.append("\(error)")
            }
        }
        defer { ads.forEach { $0.invalidate() } }
        if !errors.isEmpty {
            throw ConformanceFailure(
                scenario: name, expectation: "16 concurrent loads without errors",
                observed: "\(errors.count) failed, first: \(errors[0])")
        }
        let distinct = Set(ads.map { ObjectIdentifier($0) }).count
        if distinct != ads.count {
            throw ConformanceFailure(
                scenario: name, expectation: "a distinct ad per load",
                observed: "\(ads.count) fills but \(distinct) distinct ads")
        }
    }

    private static func requireFill(_ subject: ConformanceSubject, _ name: String) async throws -> LoadedAd {
        let result: AdLoadResult
        do {
            result = try await subject.network.load(subject.fillRequest)
        } catch {
            throw ConformanceFailure(
                scenario: name, expectation: "the fill request to fill", observed: "an error: \(error)")
        }
        guard let ad = result.ad else {
            throw ConformanceFailure(scenario: name, expectation: "the fill request to fill", observed: "no fill")
        }
        return ad
    }
}
