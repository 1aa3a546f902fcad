import AdMediation
import AdStorage
import AdTransport
import AdapterKit
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// The delivery loop that sends the queue (batches, back-off), and what connectivity and the app's life cycle change.
extension GrowthCatClient {
    // MARK: The delivery loop

    /// Starts the background delivery loop unless it runs (then it makes one more pass). Never waits.
    func requestDelivery() {
        guard !isShutDown else { return }
        deliveryWanted = true
        guard deliveryTask == nil else { return }
        deliveryTask = Task { [weak self] in await self?.runDelivery() }
    }

    /// The one delivery loop of this client's queue: flushes until the queue is empty. After a 5xx, a 429 (at
    /// least its `Retry-After`) or a storage failure it waits — `retryBaseDelay` doubling per failure in a row, at
    /// most `maxRetryDelay`, with jitter — and after `maxServerRetries` retries in a row it pauses: the events stay
    /// queued for the next event, timer, connectivity change or life-cycle call, each of which makes one attempt
    /// (after the current back-off). Offline, the offline probe takes over. Never a tight loop.
    func runDelivery() async {
        while !isShutDown && !Task.isCancelled {
            if let notBefore = deliveryNotBefore, clock.now < notBefore {
                do { try await clock.sleep(for: notBefore - clock.now) } catch { break }
                continue
            }
            deliveryWanted = false
            let report = await flushAdEvents()
            guard let stop = report.stoppedBy else {
                if deliveryWanted { continue }
                break
            }
            if stop == .offline || stop == .shutDown { break }
            if deliveryFailures > configuration.maxServerRetries {
                logger.warning(
                    "event delivery paused after repeated failures; events stay queued",
                    metadata: ["failures": "\(deliveryFailures)", "queued": "\(report.remaining)"])
                break
            }
        }
        deliveryTask = nil
    }

    /// `retryBaseDelay × 2^(failures-1)`, at most `maxRetryDelay`, less up to `retryJitter` of itself at random.
    func backoff(afterFailures failures: Int) -> Duration {
        let exponent = min(max(0, failures - 1), 20)
        let delay = min(configuration.retryBaseDelay * (1 << exponent), configuration.maxRetryDelay)
        let jitter = min(max(0, configuration.retryJitter), 1)
        guard jitter > 0 else { return delay }
        return delay * (1 - Double.random(in: 0...jitter))
    }

    /// Waits until the background delivery loop is idle (for tests). It waits through the loop's back-off, which runs
    /// on the injected clock: call it only when no back-off is pending, or while something advances the clock.
    func deliveryIdle() async {
        while let task = deliveryTask { await task.value }
    }

    /// Events waiting in the durable queue (delivered batches whose removal failed are not counted).
    public var pendingEventCount: Int {
        get async { max(0, ((try? await queue.count()) ?? 0) - acceptedUndeleted.count - unremovable.count) }
    }

    // MARK: Connectivity and life cycle

    func wentOffline() {
        guard !isOffline else { return }
        isOffline = true
        logger.info("offline: events are kept and the server is probed")
        guard !isShutDown else { return }
        let clock = clock, interval = configuration.offlineProbeInterval
        probeTimer = Task { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                guard let self else { return }
                // The probe is a flush attempt: it succeeds as soon as the server is reachable again.
                if await self.pendingEventCount > 0 {
                    await self.flushAdEvents()
                } else {
                    _ = try? await self.refreshSDKConfig()
                }
                if await !self.isOffline { return }
            }
        }
    }

    func wentOnline() {
        if isOffline { logger.info("online again: replaying the offline queue") }
        isOffline = false
        probeTimer?.cancel()
        probeTimer = nil
        // Connectivity is back: replay the offline queue without blocking the request that noticed it.
        requestDelivery()
    }

    func connectivityChanged(_ online: Bool) async {
        if online { await flushAdEvents() } else { isOffline = true }
    }

    /// The app came to the foreground: refresh the config.
    public func applicationWillEnterForeground() async {
        _ = try? await refreshSDKConfig()
    }

    /// The app goes to the background: flush everything.
    @discardableResult
    public func applicationDidEnterBackground() async -> FlushReport {
        await flushAdEvents()
    }
}
