import AdMediation
import AdTransport
import Foundation
import Synchronization

/// The two timing rules: cancellation within 100 ms and a 200 ms timeout within 300 ms, each with the measured
/// scheduler slack and at most three attempts.
extension AdNetworkConformance {
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
            let loadStarted = ContinuousClock.now
            let task = Task {
                defer { returned.store(true, ordering: .releasing) }
                return try await subject.network.load(request)
            }
            // Let the load reach the wire.
            for _ in 0..<200 where subject.wire.requestCount == before { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(20))
            let ((outcome, elapsed, answeredFirst, cancelledAfter), slack) = await withSlack {
                () async -> (Result<AdLoadResult, any Error>, Duration, Bool, Duration) in
                let start = ContinuousClock.now
                let answeredFirst = returned.load(ordering: .acquiring)
                task.cancel()
                let outcome = await task.result
                return (outcome, ContinuousClock.now - start, answeredFirst, start - loadStarted)
            }
            // A fill when the cancel came a second or more after the load started proves nothing either: the slow
            // answer may have been on its way already (a stalled process), and a load that has its answer may finish.
            let lateFill = cancelledAfter >= .seconds(1) && (try? outcome.get())?.ad != nil
            if answeredFirst || lateFill {
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
}
