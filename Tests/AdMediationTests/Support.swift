import AdMediation
import AdNetworkConformance
import Testing

extension AdFormat.Kind {
    /// A network's own kind, declared here as a network module declares one (MARS's `tile`): the core's set is open.
    static let tile = AdFormat.Kind(rawValue: "tile")
    /// The kinds these tests' networks serve: the core's and ``tile``.
    static let everyTested = Set(builtIn + [tile])
}

extension AdFormat {
    /// A placement of the tests' own ``AdFormat/Kind/tile`` kind.
    static let tile = AdFormat.unsized(.tile)
}

/// A network whose loads wait until the test answers them, so tests control exactly when and in which order lines
/// answer. By default it ignores cancellation (a "stubborn" adapter); `honoursCancellation` makes a cancelled load
/// end at once with `CancellationError`, as a conforming adapter does.
final class GateNetwork: AdNetwork {
    let id: String
    let capabilities = AdNetworkCapabilities(formats: AdFormat.Kind.everyTested)
    private let honoursCancellation: Bool
    private let pending = LockedValue<
        [(id: Int, request: AdRequest, continuation: CheckedContinuation<AdLoadResult, any Error>)]
    >([])
    private let counters = LockedValue((loads: 0, cancellations: 0, cancelledIDs: Set<Int>()))

    init(id: String, honoursCancellation: Bool = false) {
        self.id = id
        self.honoursCancellation = honoursCancellation
    }

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        let loadID = counters.withLock {
            $0.loads += 1
            return $0.loads
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelledAlready = counters.withLock { counters in
                    if honoursCancellation, counters.cancelledIDs.contains(loadID) { return true }
                    pending.withLock { $0.append((loadID, request, continuation)) }
                    return false
                }
                if cancelledAlready { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let entry = counters.withLock { counters -> CheckedContinuation<AdLoadResult, any Error>? in
                counters.cancellations += 1
                guard honoursCancellation else { return nil }
                counters.cancelledIDs.insert(loadID)
                return pending.withLock { list in
                    guard let index = list.firstIndex(where: { $0.id == loadID }) else { return nil }
                    return list.remove(at: index).continuation
                }
            }
            entry?.resume(throwing: CancellationError())
        }
    }

    /// How many loads were asked to cancel.
    var cancellations: Int { counters.withLock { $0.cancellations } }

    var waiting: Int { pending.withLock { $0.count } }

    func waitForLoads(_ count: Int = 1) async {
        await until { waiting >= count }
    }

    /// Answers the oldest waiting load.
    func answer(_ result: Result<AdLoadResult, AdError>) {
        let next = pending.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        next?.continuation.resume(with: result.mapError { $0 as any Error })
    }

    func fill(_ creative: String, ecpm: Double? = nil) -> LoadedAd {
        LoadedAd(
            networkID: id, placement: "p", format: .interstitial, creative: AdCreative(id: creative, kind: "image"),
            ecpm: ecpm, loadedAt: .zero)
    }
}

/// Waits, by yielding, until `condition` holds; records an issue and returns after 30 s (or when cancelled). The wait
/// ends at the event: the 30 s is a hang guard far above what a scenario needs on a busy machine.
func until(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    let deadline = ContinuousClock.now + .seconds(30)
    while !condition() {
        guard ContinuousClock.now < deadline, !Task.isCancelled else {
            Issue.record("the condition did not hold within 30 s", sourceLocation: sourceLocation)
            return
        }
        await Task.pollPause()
    }
}

func placement(
    _ lines: [WaterfallLine], mode: PlacementConfiguration.Mode = .parallel, format: AdFormat = .interstitial,
    frequencyCap: Int? = nil, minInterval: Duration? = nil, deadline: Duration = .seconds(5)
) -> PlacementConfiguration {
    PlacementConfiguration(
        format: format, mode: mode, lines: lines, deadline: deadline, frequencyCap: frequencyCap,
        minInterval: minInterval)
}

let interstitial = AdRequest(placement: "p", format: .interstitial)

/// A value set by the caller of the mediator, which a line's adapter must see.
enum RequestTag {
    @TaskLocal static var value: String?
}

/// A network that records the caller's task-local tag and its task priority, and has no fill.
final class TaskLocalReadingNetwork: AdNetwork {
    let id: String
    let capabilities = AdNetworkCapabilities(formats: AdFormat.Kind.everyTested)
    private let observed = LockedValue<(tags: [String?], priorities: [TaskPriority])>(([], []))

    init(id: String) { self.id = id }

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        let tag = RequestTag.value, priority = Task.currentPriority
        observed.withLock {
            $0.tags.append(tag)
            $0.priorities.append(priority)
        }
        return .noFill(NoFill(reason: "observing"))
    }

    var seen: [String?] { observed.withLock { $0.tags } }
    var priorities: [TaskPriority] { observed.withLock { $0.priorities } }
}
