import AdMediation
import AdMediationTesting
import Observation
import Testing

/// Set by an observation's `onChange`.
final class Fired: Sendable {
    private let flag = LockedValue(false)
    /// Records the change.
    func set() { flag.withLock { $0 = true } }
    /// Whether a change was recorded.
    var value: Bool { flag.withLock { $0 } }
}

/// Opened once (by a change or the deadline); one waiter.
final class Wake: Sendable {
    private let state = LockedValue<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func fire() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.fired = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { s -> Bool in
                if s.fired { return true }
                s.waiter = c
                return false
            }
            if ready { c.resume() }
        }
    }
}

/// Waits until `condition` holds, re-checking it at each change of the observable properties it reads (the models'
/// own notifications, no polling); records an issue once `limit` of real time has passed (the logic under test runs
/// on a manual clock: the limit only ends a test whose rule broke; it is generous because under the whole suite on two
/// cores a main-actor hop has been seen to take seconds).
@MainActor
func waitUntil(
    _ what: String, within limit: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @MainActor () -> Bool
) async {
    let deadline = ContinuousClock.now + limit
    while true {
        let wake = Wake()
        let holds = withObservationTracking {
            condition()
        } onChange: {
            wake.fire()
        }
        if holds { return }
        guard ContinuousClock.now < deadline else {
            Issue.record("\(what): not within \(limit)", sourceLocation: sourceLocation)
            return
        }
        let timer = Task.detached {
            try? await Task.sleep(until: deadline, clock: .continuous)
            wake.fire()
        }
        await wake.wait()
        timer.cancel()
    }
}

/// Full-screen rules stated as a contract, with the reward the network grants.
struct TestRules: FullScreenRules {
    var contract: FullScreenContract
    var showsSponsoredLabel = true
    var grants: AdReward? = nil

    func validateReward(_ claim: RewardClaim) async throws(AdError) -> AdReward? { grants }
}

/// Records the events that reach the network.
final class RecordingReporter: AdEventReporter {
    let events = LockedValue<[AdEvent]>([])

    func deliver(_ record: AdEventRecord) async throws -> AdEventDelivery {
        events.withLock { $0.append(record.event) }
        return .delivered
    }

    var received: [AdEvent] { events.withLock { $0 } }
}

/// A full-screen ad under `rules`, as an adapter builds it, and what its network receives.
func fullScreenAd(
    _ rules: TestRules, kind: String = "image", disclosure: String? = nil
) -> (LoadedAd, RecordingReporter) {
    let reporter = RecordingReporter()
    var creative = AdCreative(id: "c1", kind: kind, assetURL: "https://example.invalid/c1")
    creative.disclosureLabel = disclosure
    let ad = LoadedAd(
        networkID: "net", placement: "p", format: rules.contract.reward == nil ? .interstitial : .rewarded,
        creative: creative, loadedAt: .zero, reporter: reporter, fullScreenRules: rules)
    return (ad, reporter)
}
