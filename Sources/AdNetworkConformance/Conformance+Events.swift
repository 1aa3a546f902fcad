import AdMediation
import AdTransport
import Foundation

/// The event rules: nothing sent before an event is reported or after invalidation, one impression per show.
extension AdNetworkConformance {
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
}
