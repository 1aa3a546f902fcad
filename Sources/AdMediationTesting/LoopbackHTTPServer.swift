import AdMediation
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 with a port chosen by the kernel, one thread per connection, keep-alive,
/// `TCP_NODELAY`, and scripted faults (reset mid-body, truncated body, silent close, slow drip, delays).
///
/// It exists so transport tests and benchmarks talk to a real socket whose behaviour they control byte by byte.
/// It is not a general-purpose server: request bodies must carry `Content-Length`.
public final class LoopbackHTTPServer: Sendable {
    /// A request as received.
    public struct Request: Sendable {
        /// The method token.
        public var method: String
        /// The request target as sent (path and query, or an absolute URL when sent to a proxy).
        public var target: String
        /// Header fields in order.
        public var headers: [(name: String, value: String)]
        /// The body bytes.
        public var body: [UInt8]
        /// Which accepted connection carried it (1-based, in accept order).
        public var connectionID: Int

        /// The first value of a header, compared case-insensitively.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The target without its query.
        public var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }
    }

    /// A response to send.
    public struct Response: Sendable {
        /// Status code.
        public var status: Int
        /// Header fields; `Content-Length` is added unless present.
        public var headers: [(String, String)]
        /// Body bytes.
        public var body: [UInt8]
        /// How long to wait before answering.
        public var delay: Duration
        /// Send no `Content-Length`: the body ends when the server closes the connection.
        public var closeDelimited: Bool

        /// Creates a response.
        public init(
            status: Int = 200,
            headers: [(String, String)] = [],
            body: [UInt8] = [],
            delay: Duration = .zero,
            closeDelimited: Bool = false
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
            self.closeDelimited = closeDelimited
        }

        /// A text response.
        public static func text(_ text: String, status: Int = 200, delay: Duration = .zero) -> Response {
            Response(status: status, headers: [("Content-Type", "text/plain")], body: Array(text.utf8), delay: delay)
        }
    }

    /// What to do with a request.
    public enum Action: Sendable {
        /// Send the response and keep the connection open.
        case respond(Response)
        /// Send the headers (with the full `Content-Length`) and `bytes` of the body, then reset the connection.
        case resetMidBody(Response, afterBytes: Int)
        /// Send the headers (with the full `Content-Length`) and `bytes` of the body, then close cleanly.
        case truncate(Response, afterBytes: Int)
        /// Close the connection without answering.
        case closeWithoutResponse
        /// Send the response in chunks of `chunkBytes`, pausing `interval` between them.
        case slowDrip(Response, chunkBytes: Int, interval: Duration)
        /// Write `bytes` exactly as given (an answer this server would never serialise: a malformed status line),
        /// then close the connection.
        case raw([UInt8])
        /// Write `bytes` exactly as given, then hold the connection open until ``LoopbackHTTPServer/stop()``.
        case rawAndHold([UInt8])
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
    /// The port the server listens on.
    public let port: Int
    private let handler: @Sendable (Request) -> Action
    private let state = LockedValue(State())
    private let accepted = Atomic<Int>(0)
    private let requests = Atomic<Int>(0)

    /// Starts listening on 127.0.0.1 with a free port and serves `handler` until ``stop()``.
    public init(handler: @escaping @Sendable (Request) -> Action) throws {
        let fd = socket(AF_INET, SocketPlatform.stream, 0)
        guard fd >= 0 else { throw ServerError("socket() failed: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
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
            throw ServerError("bind/listen failed: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.listener = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.handler = handler
        let thread = Thread { [self] in self.acceptLoop() }
        thread.name = "LoopbackHTTPServer.accept"
        thread.start()
    }

    /// A port on which every connection is refused for the rest of the process: a socket is bound to it (without
    /// `SO_REUSEADDR`, so no other socket can take the port) and never listens. Unlike ``unusedPort()``, no server
    /// started later by a parallel test can be given this port. The socket is kept open on purpose until exit.
    public static func refusingPort() throws -> Int {
        let fd = socket(AF_INET, SocketPlatform.stream, 0)
        guard fd >= 0 else { throw ServerError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw ServerError("bind: errno \(errno)")
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A free port that nothing listens on (bound and released at once), for starting a server on a known port.
    /// For "connection refused" cases use ``refusingPort()``: in a parallel suite another server may take this one.
    public static func unusedPort() throws -> Int {
        let server = try LoopbackHTTPServer { _ in .closeWithoutResponse }
        let port = server.port
        server.stop()
        return port
    }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Connections accepted so far.
    public var connectionsAccepted: Int { accepted.load(ordering: .relaxed) }

    /// Requests received so far.
    public var requestsReceived: Int { requests.load(ordering: .relaxed) }

    /// Stops accepting, closes every connection and the listener. Idempotent.
    ///
    /// Every `shutdown` happens under the lock: a connection's thread removes its descriptor from the set under the
    /// same lock before closing it, and the accept thread marks the listener closed before closing it, so this never
    /// touches a descriptor number the process has already reused for another socket (which would cut a connection
    /// of some other server or client in the same process).
    public func stop() {
        state.withLock { s in
            if s.stopped { return }
            s.stopped = true
            if !s.listenerClosed { shutdown(listener, Int32(SHUT_RDWR)) }
            for fd in s.connections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    deinit { stop() }

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
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            SocketPlatform.ignoreSIGPIPE(fd)
            let id = accepted.add(1, ordering: .relaxed).newValue
            let thread = Thread { [self] in self.serve(fd, connectionID: id) }
            thread.stackSize = 256 << 10
            thread.start()
        }
        state.withLock { s in
            s.listenerClosed = true
            close(listener)
        }
    }

    private func serve(_ fd: Int32, connectionID: Int) {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 << 10)
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var open = true
        connection: while open {
            // Read until a full header block is buffered.
            var headerEnd = Self.findHeaderEnd(buffer)
            while headerEnd == nil {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break connection }
                buffer.append(contentsOf: chunk[0..<n])
                headerEnd = Self.findHeaderEnd(buffer)
            }
            guard let end = headerEnd else { break }
            guard var request = Self.parseHead(buffer[0..<end]) else { break }
            buffer.removeFirst(end + 4)
            let length = Int(request.header("Content-Length") ?? "0") ?? 0
            while buffer.count < length {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break connection }
                buffer.append(contentsOf: chunk[0..<n])
            }
            request.body = Array(buffer[0..<length])
            buffer.removeFirst(length)
            request.connectionID = connectionID
            requests.add(1, ordering: .relaxed)
            let closeAfter = request.header("Connection")?.lowercased() == "close"
            switch handler(request) {
            case .respond(let response):
                pause(response.delay)
                open =
                    writeAll(fd, Self.serialize(response, bodyBytes: response.body.count)) && !closeAfter
                    && !response.closeDelimited
            case .resetMidBody(let response, let bytes):
                pause(response.delay)
                _ = writeAll(fd, Self.serialize(response, bodyBytes: min(bytes, response.body.count)))
                SocketPlatform.resetOnClose(fd)
                open = false
            case .truncate(let response, let bytes):
                pause(response.delay)
                _ = writeAll(fd, Self.serialize(response, bodyBytes: min(bytes, response.body.count)))
                shutdown(fd, Int32(SHUT_WR))
                open = false
            case .closeWithoutResponse:
                open = false
            case .slowDrip(let response, let chunkBytes, let interval):
                pause(response.delay)
                let bytes = Self.serialize(response, bodyBytes: response.body.count)
                var offset = 0
                open = true
                while offset < bytes.count && open {
                    let next = min(bytes.count, offset + max(1, chunkBytes))
                    open = writeAll(fd, Array(bytes[offset..<next]))
                    offset = next
                    if offset < bytes.count { pause(interval) }
                }
                open = open && !closeAfter && !response.closeDelimited
            case .raw(let bytes):
                _ = writeAll(fd, bytes)
                open = false
            case .rawAndHold(let bytes):
                if writeAll(fd, bytes) { holdUntilStopped() }
                open = false
            case .stream(let head, let chunk):
                var writing = writeAll(fd, head)
                while writing && !isStopped { writing = writeAll(fd, chunk) }
                open = false
            case .silent:
                holdUntilStopped()
                open = false
            }
        }
        state.withLock { s in
            s.connections.remove(fd)
            close(fd)
        }
    }

    /// Keeps a connection's thread (and so the connection) until ``stop()``.
    private func holdUntilStopped() {
        while !isStopped { pause(.milliseconds(50)) }
    }

    /// Sleeps in slices so ``stop()`` is not held up by a long scripted delay.
    private func pause(_ duration: Duration) {
        var remaining = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        while remaining > 0 && !isStopped {
            let slice = min(remaining, 5_000)
            usleep(UInt32(slice))
            remaining -= slice
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, bytes.count - offset, SocketPlatform.sendFlags)
            }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }

    private static func findHeaderEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4)
        where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    private static func parseHead(_ bytes: ArraySlice<UInt8>) -> Request? {
        guard let text = String(bytes: bytes, encoding: .utf8) else { return nil }
        let lines = text.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2 else { return nil }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return Request(method: String(parts[0]), target: String(parts[1]), headers: headers, body: [], connectionID: 0)
    }

    private static func serialize(_ response: Response, bodyBytes: Int) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(reason(response.status))\r\n"
        var hasLength = false
        for (name, value) in response.headers {
            if name.lowercased() == "content-length" { hasLength = true }
            head += "\(name): \(value)\r\n"
        }
        if response.closeDelimited { head += "Connection: close\r\n" }
        if !hasLength && !response.closeDelimited { head += "Content-Length: \(response.body.count)\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        bytes.append(contentsOf: response.body[0..<bodyBytes])
        return bytes
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
