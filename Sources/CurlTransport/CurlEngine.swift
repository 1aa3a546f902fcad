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
    private struct Inbox {
        var adds: [Transfer] = []
        var cancels: [Transfer] = []
        /// Reset easy handles kept for later requests.
        var idle: [EasyHandle] = []
        var stopRequested = false
        var stopped = false
        /// Whether the first request has set libcurl up and started the thread, or why it could not.
        var start = Start.notStarted
        /// A wake-up was claimed since the engine last drained the inbox.
        var wakePending = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []

        /// Whether the caller should signal the engine: the first hand-over since the last drain does.
        mutating func claimWake() -> Bool {
            if wakePending { return false }
            wakePending = true
            return true
        }
    }

    /// The engine's start: made by the first request, never by `init`.
    private enum Start {
        case notStarted
        case running
        case failed(HTTPClientError)
    }

    /// A finished transfer's caller and what it gets, resumed once the engine has put its handle back.
    private struct Resumption {
        var continuation: UnsafeContinuation<HTTPResponse, any Error>
        var result: Result<HTTPResponse, HTTPClientError>
    }

    /// Idle easy handles kept for reuse; more are freed.
    static let idleCapacity = 64

    private let configuration: CurlHTTPClient.Configuration
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

    /// Sets every option; throws ``HTTPClientError/Code/other`` naming the first option libcurl refused.
    private func configure(_ transfer: Transfer, _ request: HTTPRequest, target: Target, timeoutNanos: UInt64) throws {
        let easy = transfer.easy
        func check(_ code: CURLcode, _ option: String) throws {
            guard code == CURLE_OK else {
                throw HTTPClientError(
                    .other, "libcurl refused \(option) (CURLcode \(code.rawValue)); the request was not sent")
            }
        }
        let timeoutMs = Int(clamping: (timeoutNanos / 1_000_000) &+ (timeoutNanos % 1_000_000 == 0 ? 0 : 1))
        try check(curlshim_setopt_str(easy, CURLOPT_URL, request.url), "CURLOPT_URL")
        try check(curlshim_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        try check(curlshim_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, timeoutMs)), "CURLOPT_TIMEOUT_MS")
        let connectMs = Int(configuration.connectTimeout.nanosecondsClamped / 1_000_000)
        try check(
            curlshim_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, min(connectMs, max(1, timeoutMs)))),
            "CURLOPT_CONNECTTIMEOUT_MS")
        try check(curlshim_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1), "CURLOPT_SSL_VERIFYPEER")
        try check(curlshim_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2), "CURLOPT_SSL_VERIFYHOST")
        if let ca = configuration.caCertificatesPath {
            try check(curlshim_setopt_str(easy, CURLOPT_CAINFO, ca), "CURLOPT_CAINFO")
        }
        try check(curlshim_setopt_str(easy, CURLOPT_PROXY, configuration.proxy ?? ""), "CURLOPT_PROXY")
        try check(curlshim_setopt_str(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "CURLOPT_PROTOCOLS_STR")
        // libcurl never follows a redirect itself: `RedirectFollower` does, one transfer per hop, so every hop's URL
        // passes `validate` and the destination rule, and headers and bodies are dropped across origins.
        try check(curlshim_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0), "CURLOPT_FOLLOWLOCATION")
        try check(curlshim_setopt_str(easy, CURLOPT_ACCEPT_ENCODING, ""), "CURLOPT_ACCEPT_ENCODING")
        try check(
            curlshim_setopt_off(
                easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(clamping: max(0, configuration.maxResponseBytes))),
            "CURLOPT_MAXFILESIZE_LARGE")
        try check(
            curlshim_setopt_long(
                easy, CURLOPT_MAXAGE_CONN, Int(configuration.maxIdleConnectionAge.nanosecondsClamped / 1_000_000_000)),
            "CURLOPT_MAXAGE_CONN")
        try check(curlshim_setopt_str(easy, CURLOPT_USERAGENT, configuration.userAgent), "CURLOPT_USERAGENT")
        try check(curlshim_setopt_ptr(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer), "CURLOPT_ERRORBUFFER")
        try check(curlshim_setopt_write_cb(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback), "CURLOPT_WRITEFUNCTION")
        try check(
            curlshim_setopt_ptr(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(transfer).toOpaque()),
            "CURLOPT_WRITEDATA")
        // Headers are collected and capped here as they arrive, in one pass; `curl_easy_nextheader` afterwards
        // walks the whole list on every call (quadratic: 60 000 headers held the engine thread for ~45 s).
        try check(
            curlshim_setopt_write_cb(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback), "CURLOPT_HEADERFUNCTION")
        try check(
            curlshim_setopt_ptr(easy, CURLOPT_HEADERDATA, Unmanaged.passUnretained(transfer).toOpaque()),
            "CURLOPT_HEADERDATA")

        switch request.method {
        case .get where request.body == nil:
            try check(curlshim_setopt_long(easy, CURLOPT_HTTPGET, 1), "CURLOPT_HTTPGET")
        case .head:
            try check(curlshim_setopt_long(easy, CURLOPT_NOBODY, 1), "CURLOPT_NOBODY")
        case .post:
            break
        default:
            try check(
                curlshim_setopt_str(easy, CURLOPT_CUSTOMREQUEST, request.method.rawValue), "CURLOPT_CUSTOMREQUEST")
        }
        if let body = request.body {
            try check(
                curlshim_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)),
                "CURLOPT_POSTFIELDSIZE_LARGE")
            // COPYPOSTFIELDS copies the bytes, so the request's buffer need not outlive this call. An empty body has no
            // base address; a one-byte scratch buffer stands in (libcurl copies zero bytes of it).
            var scratch: UInt8 = 0
            let code = body.withUnsafeBytes { raw in
                withUnsafeMutablePointer(to: &scratch) { fallback in
                    curlshim_setopt_ptr(
                        easy, CURLOPT_COPYPOSTFIELDS,
                        UnsafeMutableRawPointer(mutating: raw.baseAddress) ?? UnsafeMutableRawPointer(fallback))
                }
            }
            try check(code, "CURLOPT_COPYPOSTFIELDS")
        } else if request.method == .post {
            try check(curlshim_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, 0), "CURLOPT_POSTFIELDSIZE_LARGE")
            try check(curlshim_setopt_str(easy, CURLOPT_COPYPOSTFIELDS, ""), "CURLOPT_COPYPOSTFIELDS")
        }

        var list: UnsafeMutablePointer<curl_slist>?
        for field in request.headers {
            list = curl_slist_append(list, "\(field.name): \(field.value)")
        }
        // An empty `Expect:` stops libcurl from waiting up to 1 s for `100 Continue` on large or PUT bodies.
        list = curl_slist_append(list, "Expect:")
        transfer.headerList = list
        try check(curlshim_setopt_ptr(easy, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER")
    }

    private struct Target {
        var host: String
    }

    /// The transport's rule for a request URL (each redirect hop's too): `https` anywhere; plain `http` to loopback,
    /// or anywhere with ``CurlHTTPClient/Configuration/allowInsecureHTTP``; never another scheme, a user name in the
    /// URL, an IP address in an odd form (`2130706433`, `[::ffff:127.0.0.1]`) or a reserved one (`0.0.0.0`). The URL
    /// is parsed by ``URLDestination``, the parser of the destination policy.
    private func validate(_ urlString: String) throws -> Target {
        let destination = try TransportRules.destination(urlString, allowInsecureHTTP: configuration.allowInsecureHTTP)
        return Target(host: destination.host)
    }

    /// Whether `host` is loopback (`localhost`, `*.localhost`, `127/8`, `::1`), by the destination policy's parser:
    /// `127.attacker.invalid` is a name, not loopback.
    static func isLoopback(_ host: String) -> Bool {
        URLDestination.classify(host: host) == .loopback
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

    private func timeoutError(_ transfer: Transfer) -> HTTPClientError {
        HTTPClientError(
            .timeout,
            "\(transfer.method) to \(transfer.host) did not complete within \(Int(transfer.timeout.milliseconds)) ms")
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

    private func complete(_ transfer: Transfer, _ code: CURLcode) -> Result<HTTPResponse, HTTPClientError> {
        let easy = transfer.easy
        guard code == CURLE_OK else { return .failure(mapError(transfer, code)) }
        var status = 0
        _ = curlshim_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        let headers = HTTPHeaders(transfer.headerFields)
        transfer.headerFields = []
        let body = transfer.body
        transfer.body = Data()
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    private func mapError(_ transfer: Transfer, _ code: CURLcode) -> HTTPClientError {
        let text = transfer.curlMessage.isEmpty ? String(cString: curl_easy_strerror(code)) : transfer.curlMessage
        let message = "\(transfer.method) to \(transfer.host): \(text) (curl \(code.rawValue))"
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return HTTPClientError(.hostNotFound, message)
        case CURLE_COULDNT_CONNECT:
            var osErrno = 0
            _ = curlshim_getinfo_long(transfer.easy, CURLINFO_OS_ERRNO, &osErrno)
            return HTTPClientError(osErrno == Int(ECONNREFUSED) ? .connectionRefused : .connectFailed, message)
        case CURLE_OPERATION_TIMEDOUT:
            return timeoutError(transfer)
        case CURLE_WRITE_ERROR where transfer.tooLarge, CURLE_FILESIZE_EXCEEDED:
            return HTTPClientError(
                .responseTooLarge,
                "\(transfer.method) to \(transfer.host): response body exceeds \(transfer.maxBytes) bytes")
        case CURLE_WRITE_ERROR where transfer.headersTooLarge:
            return HTTPClientError(
                .responseTooLarge,
                "\(transfer.method) to \(transfer.host): response headers exceed \(transfer.maxHeaderCount) fields or "
                    + "\(transfer.maxHeaderBytes) bytes")
        case CURLE_TOO_MANY_REDIRECTS:
            return HTTPClientError(.tooManyRedirects, message)
        case CURLE_PARTIAL_FILE:
            return HTTPClientError(.truncatedBody, message)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            return HTTPClientError(.connectionReset, message)
        case CURLE_GOT_NOTHING:
            return HTTPClientError(.emptyResponse, message)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS:
            return HTTPClientError(.tls, message)
        case CURLE_URL_MALFORMAT:
            return HTTPClientError(.invalidURL, message)
        case CURLE_UNSUPPORTED_PROTOCOL:
            // Our URLs are checked before libcurl sees them, so after a connection without a redirect this is the
            // server's reply: a status line that is not HTTP/1.x (`HTTP/9.9`, `HTTP/1.1 abc`) — not the app's
            // configuration (issue 31 item 8).
            var port = 0
            var redirects = 0
            _ = curlshim_getinfo_long(transfer.easy, CURLINFO_PRIMARY_PORT, &port)
            _ = curlshim_getinfo_long(transfer.easy, CURLINFO_REDIRECT_COUNT, &redirects)
            if port > 0 && redirects == 0 {
                return HTTPClientError(.invalidResponse, "\(message): the status line is not HTTP")
            }
            return HTTPClientError(.insecureURL, message)
        case CURLE_BAD_CONTENT_ENCODING, CURLE_WEIRD_SERVER_REPLY:
            return HTTPClientError(.invalidResponse, message)
        default:
            return HTTPClientError(.other, message)
        }
    }
}
