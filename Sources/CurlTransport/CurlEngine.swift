import AdMediation
import AdTransport
import CCurl
import CurlShim
import Foundation
import Synchronization

/// The multi handle and the thread that drives it (`curl_multi_perform` and `curl_multi_poll`).
///
/// Nothing starts in `init`: libcurl's global set-up, the multi handle and the thread are made by the first request
/// (``send(_:)``), so constructing a client costs an eventfd and no thread, disk or network work.
///
/// `@unchecked Sendable` is safe because the multi handle, `active`, `returned` and `resumes` are used only on the
/// engine thread (after the first request created the multi handle, under the inbox lock and before it started the
/// thread, and before the thread's exit cleaned them up); every cross-thread
/// hand-over goes through `inbox` (a lock). A caller that hands something over also claims the wake-up under the
/// lock (at most one until the engine drains the inbox, so a burst of requests costs one) and then, outside the lock,
/// signals the engine's eventfd, which `curl_multi_poll` watches. The eventfd lives as long as the engine object, so
/// a late signal after shutdown is harmless.
///
/// Easy handles are reused: a finished transfer's handle is reset and kept (at most ``idleCapacity``) for the next
/// request, so a request pays for neither `curl_easy_init` nor `curl_easy_cleanup`.
///
/// A `curl_multi_socket_action` engine on epoll was built and measured (docs/BENCHMARKS.md): on this workload it was
/// 10–25 % slower at 8 and 64 concurrent requests, so this loop stayed.
final class CurlEngine: @unchecked Sendable {
    /// Idle easy handles kept for reuse; more are freed.
    static let idleCapacity = 64

    /// The client's configuration (read by the options, `CurlEngine+Options.swift`).
    let configuration: CurlHTTPClient.Configuration
    /// Written once, by the first request under the inbox lock before the thread starts; then read on the thread only.
    private var multi: UnsafeMutableRawPointer?
    /// The engine's wake-up eventfd (-1 when the engine could not start); closed in `deinit`.
    private let wakeFD: Int32
    private let inbox = LockedValue(Inbox())
    private let liveHandles = Atomic<Int>(0)
    private let activeCount = Atomic<Int>(0)
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    /// Handles of transfers finished in this engine iteration, already reset.
    private var returned: [EasyHandle] = []
    /// Callers of transfers finished in this engine iteration.
    private var resumes: [Resumption] = []

    /// Records the configuration and makes the wake-up eventfd; starts nothing (see ``startIfNeeded()``).
    init(configuration: CurlHTTPClient.Configuration) {
        self.configuration = configuration
        curlshim_ignore_sigpipe()  // from construction on, as documented; the rest of libcurl's set-up waits
        let fd = curlshim_eventfd()
        self.wakeFD = fd
        if fd < 0 {
            let failure = HTTPClientError(.other, "eventfd failed with errno \(errno)")
            inbox.withLock { $0.start = .failed(failure) }
        }
    }

    /// On the first request: libcurl's global set-up (OpenSSL's), the multi handle and the engine thread, once.
    /// Later requests pay one lock. Returns why the engine cannot take requests, or nil when it runs.
    private func startIfNeeded() -> HTTPClientError? {
        // libcurl's global set-up (OpenSSL's, a millisecond or two) runs once per process under its own
        // `pthread_once`, outside the inbox lock, so callers that need the lock meanwhile do not wait for it.
        let started = inbox.withLock { box -> Start in box.start }
        switch started {
        case .running: return nil
        case .failed(let failure): return failure
        case .notStarted: break
        }
        let code = curlshim_global_init()
        return inbox.withLock { box -> HTTPClientError? in
            switch box.start {
            case .running: return nil
            case .failed(let failure): return failure
            case .notStarted: break
            }
            if box.stopRequested || box.stopped { return HTTPClientError(.cancelled, "the client is shut down") }
            guard code == 0 else {
                let failure = HTTPClientError(.other, "curl_global_init failed with code \(code)")
                box.start = .failed(failure)
                return failure
            }
            guard let made = curl_multi_init() else {
                let failure = HTTPClientError(.other, "curl_multi_init failed")
                box.start = .failed(failure)
                return failure
            }
            if let perHost = configuration.maxConnectionsPerHost {
                _ = curlshim_multi_setopt_long(made, CURLMOPT_MAX_HOST_CONNECTIONS, perHost)
            }
            multi = made
            box.start = .running
            let thread = Thread { [self] in self.run() }
            thread.name = "CurlHTTPClient"
            thread.start()
            return nil
        }
    }

    deinit {
        // The thread holds the engine until `run` returns, and every caller holds it while it can signal.
        if wakeFD >= 0 { close(wakeFD) }
    }

    var statistics: CurlHTTPClient.Statistics {
        .init(
            liveHandles: liveHandles.load(ordering: .relaxed), activeTransfers: activeCount.load(ordering: .relaxed),
            idleHandles: inbox.withLock { $0.idle.count },
            engineRunning: inbox.withLock { box in
                if case .running = box.start { return !box.stopped }
                return false
            })
    }

    // MARK: - Caller side

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if Task.isCancelled { throw HTTPClientError(.cancelled, "the task was cancelled before the request was sent") }
        if let failure = startIfNeeded() { throw failure }
        let transfer = try makeTransfer(request)
        return try await withTaskCancellationHandler {
            // Unsafe: the engine resumes exactly once (`finish` checks `finished`), and a checked continuation
            // costs an allocation per request.
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<HTTPResponse, any Error>) in
                transfer.continuation = continuation
                let (accepted, wake) = inbox.withLock { box -> (Bool, Bool) in
                    if box.stopRequested || box.stopped { return (false, false) }
                    box.adds.append(transfer)
                    return (true, box.claimWake())
                }
                if wake { curlshim_eventfd_signal(wakeFD) }
                if !accepted {
                    transfer.continuation = nil
                    discard(transfer)
                    continuation.resume(throwing: HTTPClientError(.cancelled, "the client is shut down"))
                }
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .sequentiallyConsistent)
            let wake = inbox.withLock { box -> Bool in
                if box.stopped { return false }  // the stop finished every transfer
                box.cancels.append(transfer)
                return box.claimWake()
            }
            if wake { curlshim_eventfd_signal(wakeFD) }
        }
    }

    /// Gives back the handle of a transfer that never reached the engine (refused options, or a client shut down).
    private func discard(_ transfer: Transfer) {
        transfer.freeHeaderList()
        transfer.handle.reset()
        let kept = inbox.withLock { box -> Bool in
            guard !box.stopped, box.idle.count < Self.idleCapacity else { return false }
            box.idle.append(transfer.handle)
            return true
        }
        if !kept { transfer.handle.free() }
        liveHandles.subtract(1, ordering: .relaxed)
    }

    func requestStop() {
        let wake = inbox.withLock { box -> Bool in
            if box.stopped || box.stopRequested { return false }
            box.stopRequested = true
            guard case .running = box.start else {
                box.stopped = true  // no thread to stop
                return false
            }
            return box.claimWake()
        }
        if wake { curlshim_eventfd_signal(wakeFD) }
    }

    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (done, wake) = inbox.withLock { box -> (Bool, Bool) in
                if box.stopped { return (true, false) }
                box.stopRequested = true
                guard case .running = box.start else {
                    box.stopped = true  // never started: nothing runs, nothing to wait for
                    return (true, false)
                }
                box.stopWaiters.append(continuation)
                return (false, box.claimWake())
            }
            if wake { curlshim_eventfd_signal(wakeFD) }
            if done { continuation.resume() }
        }
    }

    /// Creates and configures the easy handle on the calling task (allowed: it is not in the multi yet). Header
    /// names and values are checked before anything reaches libcurl, and every option that enforces policy
    /// (protocols, redirects, TLS verification, size and time limits) must be accepted, or nothing is sent.
    private func makeTransfer(_ request: HTTPRequest) throws -> Transfer {
        let target = try validate(request.url)
        try TransportRules.validateHeaders(request.headers)
        guard let handle = inbox.withLock({ $0.idle.popLast() }) ?? EasyHandle.make() else {
            throw HTTPClientError(.other, "curl_easy_init failed")
        }
        liveHandles.add(1, ordering: .relaxed)
        let timeout = request.timeout ?? configuration.defaultTimeout
        let timeoutNanos = UInt64(max(0, timeout.nanosecondsClamped))
        let transfer = Transfer(
            handle: handle,
            deadlineNanos: monotonicNanos() &+ timeoutNanos,
            timeout: timeout,
            maxBytes: configuration.maxResponseBytes,
            maxHeaderCount: max(0, configuration.maxResponseHeaderCount),
            maxHeaderBytes: max(0, configuration.maxResponseHeaderBytes),
            method: request.method.rawValue,
            host: target.host
        )
        do {
            try configure(transfer, request, target: target, timeoutNanos: timeoutNanos)
        } catch {
            discard(transfer)
            throw error
        }
        return transfer
    }

    // MARK: - Engine thread

    private func run() {
        guard let multi else { return }
        // The thread's name as `top`, `gdb` and /proc show it (Foundation's `Thread.name` is not applied there).
        curlshim_set_thread_name("CurlHTTPClient")
        var running: Int32 = 0
        // The earliest deadline of an active transfer (or later: a finished transfer's deadline may linger until the
        // next scan, which only costs that scan).
        var nearest = UInt64.max
        // Two pairs of arrays take turns: the inbox's are swapped out under the lock and emptied here (keeping their
        // capacity), so draining the inbox allocates nothing.
        var adds: [Transfer] = []
        var cancels: [Transfer] = []
        while true {
            adds.removeAll(keepingCapacity: true)
            cancels.removeAll(keepingCapacity: true)
            let stopping = inbox.withLock { box -> Bool in
                swap(&box.adds, &adds)
                swap(&box.cancels, &cancels)
                box.wakePending = false
                return box.stopRequested
            }
            for transfer in adds {
                if transfer.cancelled.load(ordering: .sequentiallyConsistent) || stopping {
                    finish(
                        transfer,
                        .failure(
                            HTTPClientError(.cancelled, stopping ? "the client is shut down" : "the task was cancelled")
                        ))
                    continue
                }
                let rc = curl_multi_add_handle(multi, transfer.easy)
                if rc != CURLM_OK {
                    finish(
                        transfer, .failure(HTTPClientError(.other, "curl_multi_add_handle failed with \(rc.rawValue)")))
                    continue
                }
                active[transfer.easy] = transfer
                nearest = min(nearest, transfer.deadlineNanos)
            }
            for transfer in cancels {
                // Identity matters: a finished transfer's handle address can already belong to a new transfer.
                guard let current = active[transfer.easy], current === transfer else { continue }
                active.removeValue(forKey: transfer.easy)
                curl_multi_remove_handle(multi, transfer.easy)
                finish(transfer, .failure(HTTPClientError(.cancelled, "the task was cancelled")))
            }
            if stopping {
                let remaining = active
                active.removeAll()
                for (easy, transfer) in remaining {
                    curl_multi_remove_handle(multi, easy)
                    finish(transfer, .failure(HTTPClientError(.cancelled, "the client is shut down")))
                }
                break
            }
            activeCount.store(active.count, ordering: .relaxed)

            curl_multi_perform(multi, &running)
            var easy: UnsafeMutableRawPointer?
            var result = CURLE_OK
            while curlshim_multi_info_read(multi, &easy, &result) == 1 {
                guard let handle = easy, let transfer = active.removeValue(forKey: handle) else { continue }
                curl_multi_remove_handle(multi, handle)
                finish(transfer, complete(transfer, result))
            }

            // Deadlines are enforced here, not only by libcurl: queued transfers do not time out in 7.88. The scan
            // runs only once the nearest deadline has passed.
            let now = monotonicNanos()
            if now >= nearest {
                nearest = .max
                for (handle, transfer) in active {
                    if transfer.deadlineNanos <= now {
                        active.removeValue(forKey: handle)
                        curl_multi_remove_handle(multi, handle)
                        finish(transfer, .failure(timeoutError(transfer)))
                    } else {
                        nearest = min(nearest, transfer.deadlineNanos)
                    }
                }
                activeCount.store(active.count, ordering: .relaxed)
            }
            // Wait for socket activity, a wake-up, libcurl's own timeouts (curl_multi_poll honours them) or the nearest
            // deadline. With no transfer there is no deadline to watch: the thread sleeps until a wake-up (the
            // eventfd stays readable until drained, so none is lost) or a timer of libcurl's own, and never polls.
            var waitMs: Int32 = 1000
            if active.isEmpty {
                nearest = .max  // a finished transfer's deadline no longer matters
                waitMs = Int32.max
            } else if nearest != .max {
                waitMs = nearest <= now ? 0 : Int32(min(1000, (nearest - now + 999_999) / 1_000_000))
            }
            flushFinished()
            var wake = curl_waitfd(fd: wakeFD, events: Int16(CURL_WAIT_POLLIN), revents: 0)
            curl_multi_poll(multi, &wake, 1, waitMs, nil)
            if wake.revents != 0 { curlshim_eventfd_drain(wakeFD) }
        }
        let (waiters, idle) = inbox.withLock { box -> ([CheckedContinuation<Void, Never>], [EasyHandle]) in
            box.stopped = true
            // Requests that raced with the stop are failed here.
            let late = box.adds
            box.adds.removeAll()
            for transfer in late {
                finish(transfer, .failure(HTTPClientError(.cancelled, "the client is shut down")))
            }
            defer {
                box.stopWaiters.removeAll()
                box.idle.removeAll()
            }
            return (box.stopWaiters, box.idle)
        }
        flushFinished()  // stopped: frees the handles instead of keeping them
        for handle in idle { handle.free() }
        // Only now, with `stopped` set under the lock, is it safe to free the multi handle.
        curl_multi_cleanup(multi)
        activeCount.store(0, ordering: .relaxed)
        for waiter in waiters { waiter.resume() }
    }

    /// Puts this iteration's reset handles back (or frees them, past ``idleCapacity`` or after the stop), then
    /// resumes the callers of the transfers that finished: a caller that sends again finds its handle ready.
    private func flushFinished() {
        activeCount.store(active.count, ordering: .relaxed)
        if !returned.isEmpty {
            let kept = inbox.withLock { box -> Int in
                let room = box.stopped ? 0 : max(0, Self.idleCapacity - box.idle.count)
                let kept = min(room, returned.count)
                box.idle.append(contentsOf: returned[..<kept])
                return kept
            }
            for handle in returned[kept...] { handle.free() }
            returned.removeAll(keepingCapacity: true)
        }
        for resumption in resumes {
            switch resumption.result {
            case .success(let response): resumption.continuation.resume(returning: response)
            case .failure(let error): resumption.continuation.resume(throwing: error)
            }
        }
        resumes.removeAll(keepingCapacity: true)
    }

    /// Ends `transfer` (already out of the multi): its handle is reset for reuse and its caller queued for
    /// ``flushFinished()``, which every engine iteration runs before it waits.
    private func finish(_ transfer: Transfer, _ result: Result<HTTPResponse, HTTPClientError>) {
        precondition(!transfer.finished, "a transfer finished twice")
        transfer.finished = true
        transfer.freeHeaderList()
        transfer.handle.reset()
        returned.append(transfer.handle)
        liveHandles.subtract(1, ordering: .relaxed)
        if let continuation = transfer.continuation {
            resumes.append(Resumption(continuation: continuation, result: result))
        }
        transfer.continuation = nil
    }
}
