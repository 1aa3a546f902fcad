import AdMediation
import AdStorage
import Foundation
import Logging

/// The client's local storage — the durable event queue and the media cache — opened by their first use, off the
/// cooperative pool, never by `init`.
extension GrowthCatClient {
    /// An opened queue and how it was opened.
    struct OpenedQueue: Sendable {
        var store: EventQueueStore
        var recovery: EventQueueStore.Recovery
    }

    /// How the durable queue was opened (opening it now if nothing has yet): `.opened`, or the file was unusable and
    /// was moved aside (`.quarantined`), or not even a fresh file could be made and the queue lives in memory
    /// (`.inMemory`).
    public var queueRecovery: EventQueueStore.Recovery {
        get async throws(StorageError) { try await openQueue().recovery }
    }

    /// The durable queue, opened on first use (see ``init(configuration:http:clock:)``).
    var queue: EventQueueStore {
        get async throws(StorageError) { try await openQueue().store }
    }

    /// Opens the queue once, on a thread outside the cooperative pool (SQLite creates, journals and syncs the file);
    /// concurrent first uses await the same opening.
    func openQueue() async throws(StorageError) -> OpenedQueue {
        let opening: Task<Result<OpenedQueue, StorageError>, Never>
        if let queueOpening {
            opening = queueOpening
        } else {
            let path = configuration.eventQueuePath
            let maxBytes = configuration.eventQueueMaxBytes
            let logger = configuration.logger
            opening = Task {
                await offCooperativePool { () -> Result<OpenedQueue, StorageError> in
                    do throws(StorageError) {
                        let (store, recovery) = try EventQueueStore.openRecovering(path: path, maxBytes: maxBytes)
                        Self.logRecovery(recovery, logger)
                        return .success(OpenedQueue(store: store, recovery: recovery))
                    } catch {
                        logger.error("the event queue could not be opened", metadata: ["reason": "\(error)"])
                        return .failure(error)
                    }
                }
            }
            queueOpening = opening
        }
        let result = await opening.value
        // A failed opening is not kept: the next event tries again (the disk may have been full for a moment).
        if case .failure = result, queueOpening == opening { queueOpening = nil }
        return try result.get()
    }

    static func logRecovery(_ recovery: EventQueueStore.Recovery, _ logger: Logger) {
        switch recovery {
        case .opened: break
        case .quarantined(let reason, let aside):
            logger.warning(
                "the event queue file could not be used: moved aside, a fresh queue started",
                metadata: ["reason": "\(reason)", "moved_to": "\(aside)"])
        case .inMemory(let reason):
            logger.warning(
                "the event queue file could not be used or replaced: events are kept in memory only",
                metadata: ["reason": "\(reason)"])
        }
    }

    /// The media cache, made (its directory created) on first use off the cooperative pool; nil when the
    /// configuration has none or its directory cannot be made (warned once: pre-downloading is off).
    var mediaCache: MediaCache? {
        get async {
            if let openedMediaCache { return openedMediaCache }
            guard let directory = configuration.mediaCacheDirectory else {
                openedMediaCache = .some(nil)
                return nil
            }
            let maxBytes = configuration.mediaCacheMaxBytes
            let made = await offCooperativePool { () -> Result<MediaCache, StorageError> in
                do throws(StorageError) {
                    return .success(try MediaCache(directory: directory, maxBytes: maxBytes))
                } catch {
                    return .failure(error)
                }
            }
            if let openedMediaCache { return openedMediaCache }  // another first use finished first
            switch made {
            case .success(let cache):
                openedMediaCache = .some(cache)
                return cache
            case .failure(let error):
                // Pre-downloading is an optimisation: without it ads render from their remote URL (the seed's
                // fallback).
                configuration.logger.warning(
                    "the media cache directory could not be used: creatives are not pre-downloaded",
                    metadata: ["reason": "\(error)"])
                openedMediaCache = .some(nil)
                return nil
            }
        }
    }
}
