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
        var event: [String: Any] = [
            "sdk_event_id": id, "event_name": name.rawValue,
            "occurred_at": (occurredAt ?? configuration.now()).formatted(.iso8601),
            "campaign_id": ad.campaignID, "creative_id": ad.creativeID, "allocation_id": ad.allocationID,
            "token": ad.token,
        ]
        if let placementKey { event["placement_key"] = placementKey }
        if let format = ad.format { event["format"] = format.rawValue }
        if let appUserID { event["app_user_id"] = appUserID }
        if let sessionID { event["session_id"] = sessionID }
        if !metadata.isEmpty { event["metadata"] = metadata }
        let payload: Data
        do {
            payload = try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys])
        } catch {
            throw AdError(.configuration, "the \(name.rawValue) event could not be serialised: \(error)")
        }
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
    private func release(_ id: String) {
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
            var events: [Any] = []
            var sequences: [Int64] = []
            var unreadable = batch.unreadable
            for event in batch.events {
                if let object = try? JSONSerialization.jsonObject(with: event.payload), object is [String: Any] {
                    events.append(object)
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
            let body =
                (try? JSONSerialization.data(withJSONObject: ["events": events], options: [.sortedKeys])) ?? Data()
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
