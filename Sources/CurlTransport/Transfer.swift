import AdMediation
import CCurl
import CurlShim
import Foundation
import Synchronization

/// One request in flight.
///
/// `@unchecked Sendable` is safe because of a hand-over protocol: the sending task configures the transfer and
/// the easy handle before publishing it through the engine's locked inbox; from then on only the engine thread
/// reads or writes its mutable fields (libcurl's callbacks run on that thread too). The only field touched from
/// other threads afterwards is `cancelled`, which is atomic.
final class Transfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    let deadlineNanos: UInt64
    let timeout: Duration
    let maxBytes: Int
    let method: String
    let host: String
    let cancelled = Atomic<Bool>(false)
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer: UnsafeMutablePointer<CChar>
    var body = Data()
    var tooLarge = false
    /// Set by the engine thread when the transfer is finished (its handle freed, its caller resumed).
    var finished = false
    var continuation: CheckedContinuation<HTTPResponse, any Error>?

    init(
        easy: UnsafeMutableRawPointer, deadlineNanos: UInt64, timeout: Duration, maxBytes: Int, method: String,
        host: String
    ) {
        self.easy = easy
        self.deadlineNanos = deadlineNanos
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.method = method
        self.host = host
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    /// Frees the libcurl resources. Called exactly once, on the engine thread, after the handle left the multi.
    func releaseHandle() {
        curl_easy_cleanup(easy)
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        errorBuffer.deallocate()
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
