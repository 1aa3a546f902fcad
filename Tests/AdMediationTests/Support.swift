import AdMediation
import AdNetworkConformance
import Synchronization
import Testing

/// A network whose loads wait until the test answers them, and which ignores cancellation (a "stubborn" adapter),
/// so tests control exactly when and in which order lines answer.
final class GateNetwork: AdNetwork {
    let id: String
    let capabilities = AdNetworkCapabilities(formats: Set(AdFormat.allNames))
    private let pending = Mutex<[(AdRequest, CheckedContinuation<AdLoadResult, any Error>)]>([])

    init(id: String) { self.id = id }

    func load(_ request: AdRequest) async throws -> AdLoadResult {
        try await withCheckedThrowingContinuation { continuation in
            pending.withLock { $0.append((request, continuation)) }
        }
    }

    var waiting: Int { pending.withLock { $0.count } }

    func waitForLoads(_ count: Int = 1) async {
        while waiting < count { await Task.pollPause() }
    }

    /// Answers the oldest waiting load.
    func answer(_ result: Result<AdLoadResult, AdError>) {
        let next = pending.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        next?.1.resume(with: result.mapError { $0 as any Error })
    }

    func fill(_ creative: String, ecpm: Double? = nil) -> LoadedAd {
        LoadedAd(networkID: id, placement: "p", format: .interstitial, creative: AdCreative(id: creative, kind: "image"),
                 ecpm: ecpm, loadedAt: .zero)
    }
}

/// Waits, by yielding, until `condition` holds; records an issue and returns after 10 s (or when cancelled).
func until(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        guard ContinuousClock.now < deadline, !Task.isCancelled else {
            Issue.record("the condition did not hold within 10 s", sourceLocation: sourceLocation)
            return
        }
        await Task.pollPause()
    }
}

func placement(_ lines: [WaterfallLine], mode: PlacementConfiguration.Mode = .parallel, format: String = "interstitial",
               frequencyCap: Int? = nil, minIntervalS: Double? = nil, deadlineMs: Int = 5000) -> PlacementConfiguration {
    PlacementConfiguration(format: format, mode: mode, lines: lines, deadlineMs: deadlineMs, frequencyCap: frequencyCap, minIntervalS: minIntervalS)
}

let interstitial = AdRequest(placement: "p", format: .interstitial)
