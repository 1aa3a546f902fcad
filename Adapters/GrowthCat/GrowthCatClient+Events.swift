import AdMediation
import AdStorage
import AdapterSupport
import CoreMetrics
import Foundation
import Logging

/// Ad events through the durable queue: batching, flushing, offline replay and the app life cycle.
extension GrowthCatClient {
    // MARK: Events

    /// Records an event: appended to the durable queue first (with an `sdk_event_id` reused on every retry), then
    /// `impression` and `click` are flushed at once; other events every `batchSize` events or `batchInterval`.
    /// Throws ``AdError/Code/storage`` when the durable append failed (full disk, read-only, locked or corrupt
    /// database): the event is then not recorded, and the caller knows it.
    public func trackAdEvent(
        _ name: GrowthCatAdEventName, for ad: GrowthCatAd, placementKey: String?, appUserID: String? = nil,
        sessionID: String? = nil, metadata: [String: String] = [:]
    ) async throws(AdError) {
        let id = RandomID.uuidString()
        var event: [String: Any] = [
            "sdk_event_id": id, "event_name": name.rawValue, "occurred_at": Date().formatted(.iso8601),
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
        do {
            let cap = sdkBootstrap?.adsConfig.maxOfflineAdEvents ?? 500
            let dropped = try await queue.append(eventID: id, payload: payload, cap: cap)
            if dropped > 0 {
                logger.warning(
                    "offline queue full: oldest events dropped", metadata: ["dropped": "\(dropped)", "cap": "\(cap)"])
                eventsDropped(dropped, reason: "queue_full")
            }
        } catch {
            Counter(label: "admediation_growthcat_events_lost_total", factory: configuration.metrics).increment()
            logger.error(
                "ad event lost: it could not be stored", metadata: ["event": "\(name.rawValue)", "error": "\(error)"])
            throw AdError(.storage, "the \(name.rawValue) event was not queued: \(error)")
        }
        // An impression or click is flushed at once, and the flush records the depth; others are counted here.
        let queued = name.isImmediate ? 0 : ((try? await queue.count()) ?? 0)
        if !name.isImmediate { queueDepth(queued) }
        if name.isImmediate || queued >= configuration.batchSize {
            await flushAdEvents()
        } else if batchTimer == nil && !isShutDown {
            let clock = clock, interval = configuration.batchInterval
            batchTimer = Task { [weak self] in
                do { try await clock.sleep(for: interval) } catch { return }
                await self?.batchTimerFired()
            }
        }
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

    func batchTimerFired() async {
        batchTimer = nil
        await flushAdEvents()
    }

    /// What a flush did.
    public struct FlushReport: Sendable, Hashable {
        /// Events the server accepted (2xx), now deleted.
        public var sent = 0
        /// Events dropped because their batch was answered 400 (or 403): they can never succeed.
        public var dropped = 0
        /// Events still queued (offline, rate limited, or 5xx after the retries).
        public var remaining = 0
        /// Events the server said it had already received (`duplicates` in its answer; 0 when the answer has none).
        public var duplicates = 0
    }

    /// Sends every queued event in batches of at most 100, oldest first. A batch is deleted only after a 2xx;
    /// a 400/403 batch is dropped; 5xx is retried with exponential back-off (at most `maxServerRetries`); a
    /// transport failure leaves everything queued for the next flush.
    @discardableResult
    public func flushAdEvents() async -> FlushReport {
        if let flushing { return await flushing.value }
        let task = Task { await self.performFlush() }
        flushing = task
        let report = await task.value
        flushing = nil
        return report
    }

    func performFlush() async -> FlushReport {
        batchTimer?.cancel()
        batchTimer = nil
        var report = FlushReport()
        while true {
            guard let batch = try? await queue.peek(limit: 100), !batch.isEmpty else { break }
            let events = batch.compactMap { try? JSONSerialization.jsonObject(with: $0.payload) }
            let body =
                (try? JSONSerialization.data(withJSONObject: ["events": events], options: [.sortedKeys])) ?? Data()
            var attempt = 0
            var outcome: BatchOutcome = .keep
            while true {
                outcome = await send(batch: body)
                guard case .retry = outcome, attempt < configuration.maxServerRetries else { break }
                let delay = configuration.retryBaseDelay * (1 << attempt)
                attempt += 1
                do { try await clock.sleep(for: delay) } catch { break }
            }
            let ids = batch.map(\.eventID)
            switch outcome {
            case .accepted(let duplicates):
                try? await queue.remove(eventIDs: ids)
                report.sent += ids.count
                report.duplicates += duplicates
            case .drop:
                try? await queue.remove(eventIDs: ids)
                report.dropped += ids.count
                logger.warning("event batch refused by the server: dropped", metadata: ["events": "\(ids.count)"])
                eventsDropped(ids.count, reason: "refused")
            case .keep, .retry:
                report.remaining = (try? await queue.count()) ?? 0
                queueDepth(report.remaining)
                return report
            }
        }
        report.remaining = (try? await queue.count()) ?? 0
        queueDepth(report.remaining)
        return report
    }

    enum BatchOutcome { case accepted(duplicates: Int), drop, keep, retry }

    func send(batch body: Data) async -> BatchOutcome {
        let response: HTTPResponse
        do {
            response = try await request(.post, "/v1/ads/events", body: body)
        } catch {
            return .keep
        }
        switch response.status {
        case 200..<300:
            // The status is the acceptance; the counts are informative, so an unreadable answer still accepts.
            return .accepted(duplicates: (try? Self.parseEventsAnswer(response.body))?.duplicates ?? 0)
        case 400, 403: return .drop
        case 500..<600: return .retry
        default: return .keep
        }
    }

    /// Events waiting in the durable queue.
    public var pendingEventCount: Int { get async { (try? await queue.count()) ?? 0 } }

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
        guard !isShutDown, replayTask == nil else { return }
        replayTask = Task { [weak self] in
            await self?.flushAdEvents()
            await self?.replayFinished()
        }
    }

    func replayFinished() { replayTask = nil }

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
