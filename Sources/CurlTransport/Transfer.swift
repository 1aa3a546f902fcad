import AdMediation
import CCurl
import CurlShim
import Foundation
import Synchronization

/// An easy handle and its error buffer, ready for a request: new, or reset after an earlier one.
///
/// `@unchecked Sendable` is safe because a handle is owned by one party at a time: the engine's list of idle handles
/// (under the inbox lock), then the transfer that took it out, then the list again once it was reset.
struct EasyHandle: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    let errorBuffer: UnsafeMutablePointer<CChar>

    /// A new handle, or nil when `curl_easy_init` fails.
    static func make() -> EasyHandle? {
        guard let easy = curl_easy_init() else { return nil }
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        return EasyHandle(easy: easy, errorBuffer: errorBuffer)
    }

    /// Resets every option to its default (`curl_easy_reset`: the connection and DNS caches stay with the multi
    /// handle) and clears the error message, ready for another request. The handle must not be in a multi.
    func reset() {
        curl_easy_reset(easy)
        errorBuffer[0] = 0
    }

    /// Frees the handle and its buffer.
    func free() {
        curl_easy_cleanup(easy)
        errorBuffer.deallocate()
    }
}

/// One request in flight.
///
/// `@unchecked Sendable` is safe because of a hand-over protocol: the sending task configures the transfer and
/// the easy handle before publishing it through the engine's locked inbox; from then on only the engine thread
/// reads or writes its mutable fields (libcurl's callbacks run on that thread too). The only field touched from
/// other threads afterwards is `cancelled`, which is atomic.
final class Transfer: @unchecked Sendable {
    let handle: EasyHandle
    var easy: UnsafeMutableRawPointer { handle.easy }
    var errorBuffer: UnsafeMutablePointer<CChar> { handle.errorBuffer }
    let deadlineNanos: UInt64
    let timeout: Duration
    let maxBytes: Int
    let method: String
    let host: String
    let cancelled = Atomic<Bool>(false)
    var headerList: UnsafeMutablePointer<curl_slist>?
    var body = Data()
    var tooLarge = false
    /// Set by the engine thread when the transfer is finished (its handle reset, its caller about to be resumed).
    var finished = false
    var continuation: UnsafeContinuation<HTTPResponse, any Error>?

    init(handle: EasyHandle, deadlineNanos: UInt64, timeout: Duration, maxBytes: Int, method: String, host: String) {
        self.handle = handle
        self.deadlineNanos = deadlineNanos
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.method = method
        self.host = host
    }

    /// Frees the header list; the handle then holds no pointer into this transfer once reset.
    func freeHeaderList() {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
    }

    var curlMessage: String {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? "" : text
    }
}

/// Receives body bytes from libcurl; stops the transfer (short count → CURLE_WRITE_ERROR) at the size cap.
let curlWriteCallback: curl_write_callback = { pointer, size, count, userdata in
    guard let pointer, let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    if transfer.body.count + length > transfer.maxBytes {
        transfer.tooLarge = true
        return 0
    }
    pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        transfer.body.append(bytes, count: length)
    }
    return length
}

/// Monotonic time in nanoseconds.
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}
