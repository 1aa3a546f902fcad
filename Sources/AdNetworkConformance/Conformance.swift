import AdMediation
import AdTransport
import Foundation

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

    static func skip(_ scenario: String, _ why: String) -> ConformanceFailure {
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
        if let ecpm = ad.ecpm, !subject.network.capabilities.reportsPrice {
            throw fail("no eCPM (the network's capabilities say it reports no price)", "\(ecpm)")
        }
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

    static func requireFill(_ subject: ConformanceSubject, _ name: String) async throws -> LoadedAd {
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
