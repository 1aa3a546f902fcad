import AdTransport
import Foundation

/// What the self-ordering placements learned: read, saved and restored.
extension Mediator {
    /// What the self-ordering waterfall of `placement` has learned, by `network/placement` of each line (empty when
    /// the placement has no optimizer). For a placement with A/B arms, each arm learns apart: ask for
    /// `placement#label`.
    public func lineStatistics(of placement: String) -> [String: LineStatistics] {
        optimizers.withLock { $0[placement]?.statistics ?? [:] }
    }

    /// Saves what every self-ordering placement learned into `store`, one entry per placement
    /// (`optimizer/<placement>`), so the next launch starts from it.
    public func saveOptimizerState(to store: any MediationStateStore) async throws(AdError) {
        let snapshot = optimizers.withLock { $0.mapValues(\.statistics) }
        for (placement, statistics) in snapshot.sorted(by: { $0.key < $1.key }) {
            let data: Data
            do { data = try JSONEncoder().encode(statistics) } catch {
                throw AdError(.storage, "optimizer state of \(placement) could not be encoded: \(error)")
            }
            try await store.save(data, key: "optimizer/\(placement)")
        }
    }

    /// Restores what was saved by ``saveOptimizerState(to:)``. Entries that are unreadable or inconsistent (negative,
    /// not finite, more fills than attempts) are ignored, so a damaged store costs learning, never a crash.
    public func restoreOptimizerState(from store: any MediationStateStore) async throws(AdError) {
        let placements = optimizers.withLock { Array($0.keys) }
        for placement in placements.sorted() {
            guard let data = try await store.load(key: "optimizer/\(placement)") else { continue }
            if JSONLimits(maxBytes: 1 << 20, maxDepth: 4, maxStringBytes: 4096, maxItems: 10_000).violation(in: data)
                != nil
            {
                continue
            }
            guard let saved = try? JSONDecoder().decode([String: LineStatistics].self, from: data) else { continue }
            optimizers.withLock { $0[placement]?.restore(saved) }
        }
    }
}
