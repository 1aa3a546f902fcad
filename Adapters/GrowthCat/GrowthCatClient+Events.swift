import AdMediation
import AdStorage
import AdTransport
import AdapterKit
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// Ad events through the durable queue: one background delivery loop per client, batching, offline replay, the
/// seed's status rules (5xx, 429 with `Retry-After`, 400/403) and the app life cycle.
extension GrowthCatClient {
    // MARK: Events

    static let eventsPath = "/v1/ads/events"

    /// Records an event: appended to the durable queue (with an `sdk_event_id` reused on every retry) and delivered
    /// in the background — `impression` and `click` at once, other events every `batchSize` events or
    /// `batchInterval`. It returns as soon as the event is stored: it never waits for the network.
    ///
    /// The seed's `max_offline_ad_events` caps the events queued *while offline* (the oldest are dropped, counted
    /// and logged); online, a queue past the cap is flushed instead. When the queue's file is full, the oldest events
    /// are dropped to make room (counted, logged) and a delivery is started.
    /// Throws ``AdError/Code/storage`` when the durable append failed even so (the event alone is larger than the
    /// queue, or the database cannot be written): the event is then not recorded, and the caller knows it. While
    /// another process holds the queue file's lock (busy past SQLite's 5 s timeout), the event is not lost: it waits in
    /// memory behind any others (at most 1 000 events, 1 MiB; the oldest dropped past it, counted) and is written when
    /// the lock frees; later events wait behind it without touching the file.
    /// `occurredAt` is when it happened (the renderer's signal); by default now.
    public func trackAdEvent(
        _ name: GrowthCatAdEventName, for ad: GrowthCatAd, placementKey: String?, appUserID: String? = nil,
        sessionID: String? = nil, metadata: [String: String] = [:], occurredAt: Date? = nil
    ) async throws(AdError) {
        let id = RandomID.uuidString()
        let event = EventBody(
            sdkEventID: id, eventName: name.rawValue,
            occurredAt: (occurredAt ?? configuration.now()).formatted(.iso8601), campaignID: ad.campaignID,
            creativeID: ad.creativeID, allocationID: ad.allocationID, token: ad.token, placementKey: placementKey,
            format: ad.format?.rawValue, appUserID: appUserID, sessionID: sessionID,
            metadata: metadata.isEmpty ? nil : metadata)
        let payload = Self.wireJSON(event)
        guard !payload.isEmpty else {
            throw AdError(.configuration, "the \(name.rawValue) event serialised to an empty payload")
        }
        // Events already wait for the queue's lock: this one waits behind them, in order, without trying the file.
        guard heldEvents.isEmpty else {
            hold(id, payload)
            return
        }
        let cap = offlineCap
        let outcome: EventQueueStore.AppendOutcome
        do throws(StorageError) {
            outcome = try await queue.append(eventID: id, payload: payload, cap: isOffline ? cap : nil)
        } catch let error where error.isContention {
            // Contention is not a failure to store: the event waits in memory until the lock frees.
            hold(id, payload)
            return
        } catch {
            Counter(label: "admediation_growthcat_events_lost_total", factory: configuration.metrics).increment()
            logger.error(
                "ad event lost: it could not be stored", metadata: ["event": "\(name.rawValue)", "error": "\(error)"])
            throw AdError(.storage, "the \(name.rawValue) event was not queued: \(error)")
        }
        appended(outcome, cap: cap)
        // Offline, the periodic probe replays the queue: events do not hammer an unreachable server.
        guard !isOffline else { return }
        if name.isImmediate || outcome.count >= configuration.batchSize || outcome.droppedForSpace > 0
            || outcome.count >= cap
        {
            requestDelivery()
        } else if batchTimer == nil && !isShutDown {
            let clock = clock, interval = configuration.batchInterval
            batchTimer = Task { [weak self] in
                do { try await clock.sleep(for: interval) } catch { return }
                await self?.batchTimerFired()
            }
        }
    }

    /// The seed's `max_offline_ad_events` (default 500).
    var offlineCap: Int { max(1, sdkBootstrap?.adsConfig.maxOfflineAdEvents ?? 500) }

    /// Logs and counts what an append dropped, and records the queue's depth.
    func appended(_ outcome: EventQueueStore.AppendOutcome, cap: Int) {
        if outcome.droppedForCap > 0 {
            logger.warning(
                "offline queue over max_offline_ad_events: oldest events dropped",
                metadata: ["dropped": "\(outcome.droppedForCap)", "cap": "\(cap)"])
            eventsDropped(outcome.droppedForCap, reason: "queue_full")
        }
        if outcome.droppedForSpace > 0 {
            logger.warning(
                "event queue file full: oldest events dropped to make room",
                metadata: ["dropped": "\(outcome.droppedForSpace)", "max_bytes": "\(configuration.eventQueueMaxBytes)"])
            eventsDropped(outcome.droppedForSpace, reason: "queue_bytes")
        }
        queueDepth(outcome.count)
    }

    /// What a flush did.
    public struct FlushReport: Sendable, Hashable {
        /// Events the server accepted (2xx).
        public var sent = 0
        /// Events dropped because their batch was answered 400 (or 403): they can never succeed.
        public var dropped = 0
        /// Events still queued (offline, rate limited, 5xx, or a local storage failure).
        public var remaining = 0
        /// Events the server said it had already received (`duplicates` in its answer; 0 when the answer has none).
        public var duplicates = 0
        /// Rows of the queue that could not be read (a corrupt row): removed, counted, never sent.
        public var unreadable = 0
        /// Why the flush stopped before the queue was empty; nil when it emptied it.
        public var stoppedBy: StopReason?
    }

    /// Why a flush stopped with events still queued.
    public enum StopReason: Sendable, Hashable {
        /// The server could not be reached (or timed out): the offline probe replays the queue.
        case offline
        /// The server answered 429; no batch is posted before this instant.
        case rateLimited(until: AdInstant)
        /// The server answered 5xx (or a status the contract does not define).
        case server(status: Int)
        /// The local queue could not be read or updated.
        case storage
        /// The client was shut down.
        case shutDown
        /// A delivery failed before (5xx, 429, storage) and its back-off runs until this instant: the flush joins the
        /// delivery schedule and posts nothing earlier (seed: "5xx — retry with exponential backoff").
        case backingOff(until: AdInstant)
    }

    /// Sends queued events in batches of at most 100, oldest first, once: it never sleeps. A batch is deleted only
    /// after a 2xx (and never sent again in this process, even when that delete fails); a 400/403 batch is dropped;
    /// while a 429's `Retry-After` runs, nothing is posted. A 5xx, a 429, a timeout or a storage failure ends the
    /// flush and hands the queue to the background delivery loop, which retries with bounded exponential back-off;
    /// while that back-off runs a flush posts nothing (``StopReason/backingOff(until:)``): it never re-posts early.
    @discardableResult
    public func flushAdEvents() async -> FlushReport {
        if let flushing { return await flushing.value }
        let task = Task { await self.flushPass() }
        flushing = task
        return await task.value
    }

    /// One flush and its bookkeeping, done before the flush's value is visible: a caller that joined the flush in
    /// progress never sees it still marked as running, nor a failure whose back-off is not yet set (it would call
    /// again at once, holding the actor, in a loop).
    func flushPass() async -> FlushReport {
        let report = await performFlush()
        flushing = nil
        switch report.stoppedBy {
        case nil:
            deliveryFailures = 0
            deliveryNotBefore = nil
        case .offline?, .shutDown?:
            break
        case .backingOff?:
            requestDelivery()  // the loop posts once the back-off ends
        case .rateLimited(let until)?:
            deliveryFailures += 1
            deliveryNotBefore = max(until, clock.now + backoff(afterFailures: deliveryFailures))
            requestDelivery()
        case .server?, .storage?:
            deliveryFailures += 1
            deliveryNotBefore = clock.now + backoff(afterFailures: deliveryFailures)
            requestDelivery()
        }
        return report
    }

    func performFlush() async -> FlushReport {
        batchTimer?.cancel()
        batchTimer = nil
        var report = FlushReport()
        // A batch the server accepted but that could not be deleted is never sent again: delete it now if possible.
        if !acceptedUndeleted.isEmpty, (try? await queue.remove(sequences: Array(acceptedUndeleted))) != nil {
            acceptedUndeleted.removeAll()
        }
        flushing: while true {
            if let until = rateLimitedUntil[Self.eventsPath], clock.now < until {
                report.stoppedBy = .rateLimited(until: until)
                break
            }
            if let notBefore = deliveryNotBefore, clock.now < notBefore {
                report.stoppedBy = .backingOff(until: notBefore)
                break
            }
            let batch: EventQueueStore.Batch
            do {
                batch = try await queue.peekBatch(limit: 100, excluding: acceptedUndeleted.union(unremovable))
            } catch {
                logger.error("the event queue could not be read", metadata: ["error": "\(error)"])
                report.stoppedBy = .storage
                break
            }
            var events: [Data] = []
            var sequences: [Int64] = []
            var unreadable = batch.unreadable
            for event in batch.events {
                if Self.isJSONObject(event.payload) {
                    events.append(event.payload)
                    sequences.append(event.sequence)
                } else {
                    unreadable.append(event.sequence)
                }
            }
            if !unreadable.isEmpty {
                // One bad row never blocks the rest: it is removed (or, if even that fails, skipped) and reported.
                if (try? await queue.remove(sequences: unreadable)) == nil { unremovable.formUnion(unreadable) }
                report.unreadable += unreadable.count
                logger.warning("unreadable rows skipped in the event queue", metadata: ["rows": "\(unreadable.count)"])
                eventsDropped(unreadable.count, reason: "unreadable")
            }
            if events.isEmpty {
                if batch.events.isEmpty && batch.unreadable.isEmpty { break }
                continue
            }
            let body = Self.batchBody(events)
            switch await send(batch: body) {
            case .accepted(let duplicates):
                report.sent += sequences.count
                report.duplicates += duplicates
                if !(await removeSent(sequences)) {
                    report.stoppedBy = .storage
                    break flushing
                }
            case .drop:
                report.dropped += sequences.count
                logger.warning("event batch refused by the server: dropped", metadata: ["events": "\(sequences.count)"])
                eventsDropped(sequences.count, reason: "refused")
                if !(await removeSent(sequences)) {
                    report.stoppedBy = .storage
                    break flushing
                }
            case .offline:
                report.stoppedBy = .offline
                break flushing
            case .rateLimited(let after):
                let until = clock.now + (after ?? .zero)
                if let after, after > .zero { rateLimitedUntil[Self.eventsPath] = until }
                report.stoppedBy = .rateLimited(until: until)
                break flushing
            case .server(let status):
                report.stoppedBy = .server(status: status)
                break flushing
            case .cancelled:
                report.stoppedBy = .shutDown
                break flushing
            }
        }
        let queued = (try? await queue.count()) ?? 0
        report.remaining = max(0, queued - acceptedUndeleted.count - unremovable.count)
        queueDepth(report.remaining)
        return report
    }

    /// Deletes a batch the server has answered for good; when the delete fails, remembers the rows so that they are
    /// never posted again (and deleted later). Returns whether the delete succeeded.
    func removeSent(_ sequences: [Int64]) async -> Bool {
        do {
            try await queue.remove(sequences: sequences)
            return true
        } catch {
            acceptedUndeleted.formUnion(sequences)
            logger.error(
                "a delivered event batch could not be removed from the queue; it will not be sent again",
                metadata: ["events": "\(sequences.count)", "error": "\(error)"])
            return false
        }
    }

    enum BatchOutcome: Equatable {
        case accepted(duplicates: Int), drop, offline, rateLimited(Duration?), server(Int), cancelled
    }

    func send(batch body: Data) async -> BatchOutcome {
        let response: HTTPResponse
        do {
            response = try await request(.post, Self.eventsPath, body: body)
        } catch {
            return error.code == .cancelled ? .cancelled : .offline
        }
        switch response.status {
        case 200..<300:
            // The status is the acceptance; the counts are informative, so an unreadable answer still accepts.
            return .accepted(duplicates: (try? Self.parseEventsAnswer(response.body))?.duplicates ?? 0)
        case 400, 403: return .drop
        case 429: return .rateLimited(response.retryAfter)
        default: return .server(response.status)
        }
    }

}
