import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP server that answers with raw bytes, for answers `LoopbackHTTPServer` cannot write (a malformed
/// status line) and for hostile servers (one that never answers, never closes, or streams without end). It reads a
/// request head (up to the blank line, at most 64 KiB), then behaves as told; one thread per connection.
public final class RawLoopbackServer: Sendable {
    /// What to do once a request head arrived.
    public enum Behaviour: Sendable {
        /// Write `bytes`, then close the connection.
        case reply([UInt8])
        /// Write `bytes`, then hold the connection open (never close it) until ``RawLoopbackServer/stop()``.
        case replyAndHold([UInt8])
        /// Write `head`, then `chunk` again and again until the peer goes away or the server stops.
        case stream(head: [UInt8], chunk: [UInt8])
        /// Never answer; hold the connection open until the server stops.
        case silent
    }

    private struct State {
        var stopped = false
        var listenerClosed = false
        var connections: Set<Int32> = []
    }

    private let listener: Int32
    /// The port it listens on.
    public let port: Int
    private let behaviour: Behaviour
    private let state = Mutex(State())
    private let heads = Atomic<Int>(0)

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    /// Request heads received so far.
    public var requestsReceived: Int { heads.load(ordering: .relaxed) }

    /// Starts listening on 127.0.0.1 with a free port.
    public init(_ behaviour: Behaviour) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ChildProcessError(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 1024) == 0 else {
            close(fd)
            throw ChildProcessError(description: "bind/listen failed: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        self.behaviour = behaviour
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "RawLoopbackServer.accept"
        thread.start()
    }

    deinit { stop() }

    /// Stops accepting and shuts every connection down (under the lock, so no reused descriptor is touched).
    /// Idempotent.
    public func stop() {
        state.withLock { s in
            if s.stopped { return }
            s.stopped = true
            if !s.listenerClosed { shutdown(listener, Int32(SHUT_RDWR)) }
            for fd in s.connections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                break
            }
            let registered = state.withLock { s -> Bool in
                if s.stopped { return false }
                s.connections.insert(fd)
                return true
            }
            guard registered else {
                close(fd)
                break
            }
            let thread = Thread { [self] in serve(fd) }
            thread.stackSize = 256 << 10
            thread.start()
        }
        state.withLock { s in
            s.listenerClosed = true
            close(listener)
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { s in
                s.connections.remove(fd)
                close(fd)
            }
        }
        guard readHead(fd) else { return }
        heads.add(1, ordering: .relaxed)
        switch behaviour {
        case .reply(let bytes):
            _ = writeAll(fd, bytes)
        case .replyAndHold(let bytes):
            guard writeAll(fd, bytes) else { return }
            holdUntilClosed(fd)
        case .stream(let head, let chunk):
            guard writeAll(fd, head) else { return }
            while !isStopped, writeAll(fd, chunk) {}
        case .silent:
            holdUntilClosed(fd)
        }
    }

    /// Reads until a blank line (the end of a request head); false when the peer left first or sent over 64 KiB.
    private func readHead(_ fd: Int32) -> Bool {
        var seen: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while seen.count <= 64 << 10 {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            let from = max(0, seen.count - 3)
            seen.append(contentsOf: chunk[0..<n])
            guard seen.count >= 4 else { continue }
            for start in from...(seen.count - 4) where seen[start..<(start + 4)].elementsEqual([13, 10, 13, 10]) {
                return true
            }
        }
        return false
    }

    /// Reads and discards until the peer closes or the server stops (which shuts the socket down).
    private func holdUntilClosed(_ fd: Int32) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return send(fd, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}
