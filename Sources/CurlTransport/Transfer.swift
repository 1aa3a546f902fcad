import AdMediation
import AdTransport
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
    /// The header fields of the latest response, collected by ``receiveHeaderLine(_:)`` as they arrive.
    var headerFields: [(String, String)] = []
    /// Header fields of the latest response so far (against ``maxHeaderCount``).
    var headerCount = 0
    /// Bytes of header lines over every response of the transfer (against ``maxHeaderBytes``).
    var headerBytes = 0
    /// The blank line ending the latest response's head arrived: later lines are trailers (counted, not kept).
    var headDone = false
    /// The header cap stopped the transfer.
    var headersTooLarge = false
    let maxHeaderCount: Int
    let maxHeaderBytes: Int
    /// Set by the engine thread when the transfer is finished (its handle reset, its caller about to be resumed).
    var finished = false
    var continuation: UnsafeContinuation<HTTPResponse, any Error>?

    init(
        handle: EasyHandle, deadlineNanos: UInt64, timeout: Duration, maxBytes: Int, maxHeaderCount: Int,
        maxHeaderBytes: Int, method: String, host: String
    ) {
        self.handle = handle
        self.maxHeaderCount = maxHeaderCount
        self.maxHeaderBytes = maxHeaderBytes
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

extension Transfer {
    /// Takes one header line from libcurl (status line, field, folded continuation, blank line or trailer), in
    /// time linear in its length; false stops the transfer (CURLE_WRITE_ERROR) once the count or byte cap is passed,
    /// before the line is stored. A status line starts a new response (a redirect or an interim one): only the last
    /// response's fields are kept, as `curl_easy_nextheader` with `CURLH_HEADER` and request -1 reported them.
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        let (bytes, overflow) = headerBytes.addingReportingOverflow(line.count)
        guard !overflow, bytes <= maxHeaderBytes else {
            headersTooLarge = true
            return false
        }
        headerBytes = bytes
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        let text = UnsafeRawBufferPointer(rebasing: line[0..<end])
        if text.isEmpty {
            headDone = true
            return true
        }
        if text.starts(with: "HTTP/".utf8) {
            headerFields.removeAll(keepingCapacity: true)
            headerCount = 0
            headDone = false
            return true
        }
        guard headerCount < maxHeaderCount else {
            headersTooLarge = true
            return false
        }
        headerCount += 1
        if headDone { return true }  // a trailer
        if let first = text.first, first == 0x20 || first == 0x09 {
            // An obsolete folded line continues the previous field's value (joined with one space, as libcurl does).
            guard !headerFields.isEmpty else { return true }
            let more = Self.trimmed(text)
            if !more.isEmpty {
                headerFields[headerFields.count - 1].1 += " " + String(decoding: more, as: UTF8.self)
            }
            return true
        }
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else { return true }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: text[0..<colon]), as: UTF8.self)
        let value = Self.trimmed(UnsafeRawBufferPointer(rebasing: text[(colon + 1)...]))
        headerFields.append((name, String(decoding: value, as: UTF8.self)))
        return true
    }

    /// `bytes` without leading and trailing spaces and tabs.
    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }
}

/// Receives each header line from libcurl as it arrives; see ``Transfer/receiveHeaderLine(_:)``.
let curlHeaderCallback: curl_write_callback = { pointer, size, count, userdata in
    guard let pointer, let userdata else { return 0 }
    let (length, overflow) = size.multipliedReportingOverflow(by: count)
    guard !overflow else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: pointer, count: length)) ? length : 0
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
