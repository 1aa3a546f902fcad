import AdMediation
import AdStorage
import AdTransport
import AdapterKit
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// Events held in memory while another process holds the queue file's lock, written in order when it frees.
extension GrowthCatClient {
    // MARK: Events held while the queue is locked

    /// The most events kept in memory while the queue's file is locked by another process; past it the oldest held
    /// event is dropped (counted, reason `queue_locked`).
    static let heldEventLimit = 1_000
    /// The most payload bytes kept in memory while the queue's file is locked (1 MiB), with the same rule.
    static let heldByteLimit = 1 << 20
    /// The held writer's first wait between two attempts on the client's clock, doubling to ``heldRetryMaxDelay``.
    /// Each attempt itself waits up to SQLite's 5 s busy timeout for the lock.
    static let heldRetryDelay: Duration = .milliseconds(250)
    /// The longest wait between two attempts of the held writer.
    static let heldRetryMaxDelay: Duration = .seconds(30)

    /// Keeps an event whose append found the queue locked, behind those already held, within the bounds, and starts
    /// the writer that stores them once the lock frees.
    func hold(_ id: String, _ payload: Data) {
        if heldEvents.isEmpty {
            logger.warning("the event queue is locked by another process: events are kept in memory until it frees")
        }
        heldEvents.append((id, payload))
        heldBytes += payload.count
        var dropped = 0
        while heldEvents.count > 1, heldEvents.count > Self.heldEventLimit || heldBytes > Self.heldByteLimit {
            heldBytes -= heldEvents.removeFirst().payload.count
            dropped += 1
        }
        if dropped > 0 {
            logger.warning(
                "events held while the queue is locked: oldest dropped past the bound",
                metadata: ["dropped": "\(dropped)", "limit": "\(Self.heldEventLimit)"])
            eventsDropped(dropped, reason: "queue_locked")
        }
        guard heldWriter == nil, !isShutDown else { return }
        heldWriter = Task { [weak self] in await self?.writeHeldEvents() }
    }

    /// Writes the held events to the queue, oldest first: an attempt that finds the file still locked waits (on the
    /// client's clock, ``heldRetryDelay`` doubling to ``heldRetryMaxDelay``) and tries again; an event the queue
    /// refuses for another reason is lost (counted, logged) as a direct append's would be. Then asks for a delivery.
    func writeHeldEvents() async {
        var delay = Self.heldRetryDelay
        var wrote = false
        while let first = heldEvents.first, !Task.isCancelled {
            let cap = offlineCap
            do throws(StorageError) {
                let outcome = try await queue.append(
                    eventID: first.id, payload: first.payload, cap: isOffline ? cap : nil)
                release(first.id)
                appended(outcome, cap: cap)
                wrote = true
                delay = Self.heldRetryDelay
            } catch let error where error.isContention {
                do { try await clock.sleep(for: delay) } catch { break }
                delay = min(delay * 2, Self.heldRetryMaxDelay)
            } catch {
                if Task.isCancelled { break }
                release(first.id)
                Counter(label: "admediation_growthcat_events_lost_total", factory: configuration.metrics).increment()
                logger.error("a held ad event could not be stored: lost", metadata: ["error": "\(error)"])
            }
        }
        heldWriter = nil
        if wrote, !isOffline { requestDelivery() }
    }

    /// Removes the held event `id` (a bound may already have dropped it).
    func release(_ id: String) {
        guard let index = heldEvents.firstIndex(where: { $0.id == id }) else { return }
        heldBytes -= heldEvents.remove(at: index).payload.count
    }

    /// At shutdown: the writer stops, and what it still holds gets one attempt each while the lock is free; the rest
    /// is lost (counted, logged).
    func finishHeldEvents() async {
        heldWriter?.cancel()
        _ = await heldWriter?.value
        heldWriter = nil
        while let first = heldEvents.first {
            do {
                appended(try await queue.append(eventID: first.id, payload: first.payload, cap: nil), cap: offlineCap)
                release(first.id)
            } catch {
                break
            }
        }
        guard !heldEvents.isEmpty else { return }
        Counter(label: "admediation_growthcat_events_lost_total", factory: configuration.metrics)
            .increment(by: heldEvents.count)
        logger.error(
            "events held while the queue was locked are lost at shutdown: the lock never freed",
            metadata: ["events": "\(heldEvents.count)"])
        heldEvents.removeAll()
        heldBytes = 0
    }

    /// Events kept in memory while the queue's file is locked (for tests).
    var heldEventCount: Int { heldEvents.count }

    /// Waits until the held writer has stored what it holds or stopped (for tests; its waits run on the client's
    /// clock).
    func heldEventsWritten() async {
        while let writer = heldWriter { await writer.value }
    }

    func queueDepth(_ depth: Int) {
        Gauge(label: "admediation_growthcat_event_queue_depth", factory: configuration.metrics).record(depth)
    }

    func eventsDropped(_ count: Int, reason: String) {
        Counter(
            label: "admediation_growthcat_events_dropped_total", dimensions: [("reason", reason)],
            factory: configuration.metrics
        )
        .increment(by: count)
    }

    func batchTimerFired() {
        batchTimer = nil
        requestDelivery()
    }
}
