// Shared pieces of `app-bench`: CPU and percentile helpers, the sandbox in a child process, a port that hangs.
import AdMediation
import DemandSandbox
import Foundation

/// CPU time of this process so far (user + system, every thread), in microseconds.
func cpuMicros() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

/// CPU time of the calling thread so far, in microseconds.
func threadCPUMicros() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e6 + Double(spec.tv_nsec) / 1e3
}

/// The value at fraction `p` (0…1) of `values` (nearest rank); 0 when empty.
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let rank = min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))
    return sorted[rank]
}

extension Duration {
    /// The duration in milliseconds.
    var ms: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e3 + Double(attoseconds) / 1e15
    }
}

/// Prints `line` and flushes (the parent reads child output line by line).
func emit(_ line: String) {
    print(line)
    fflush(nil)
}

/// A child process: this binary (or `executable`, a sibling of it in the build folder) started with `arguments`.
///
/// Its stdin is a pipe whose write end only this process holds and never writes to: when this process ends, however
/// it ends (`kill -9` included), the kernel closes that end and the child reads end-of-file. `app-bench serve` exits
/// then (``watchParentThenExit()``), so a killed benchmark leaves no sandbox behind.
final class Child {
    let process = Process()
    let pipe = Pipe()
    /// The child's stdin; kept open for as long as this process lives.
    let input = Pipe()

    init(_ arguments: [String], executable: String? = nil, environment: [String: String]? = nil) throws {
        let me = URL(fileURLWithPath: CommandLine.arguments[0])
        process.executableURL = executable.map { me.deletingLastPathComponent().appendingPathComponent($0) } ?? me
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = pipe
        process.standardInput = input
        try process.run()
    }

    /// Reads stdout up to the first newline (blocking: call it from the main thread, before the measured part).
    func firstLine() -> String {
        var bytes: [UInt8] = []
        let handle = pipe.fileHandleForReading
        while true {
            let data = handle.readData(ofLength: 1)
            guard let byte = data.first else { break }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads stdout to the end and waits for the process.
    func output() -> String {
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func kill() { Foundation.kill(process.processIdentifier, SIGKILL) }
}

/// `app-bench serve`: the demand sandbox (default scenario: every network fills at once) in this process, its port
/// on stdout, until killed. The benchmarks run it in a child so their own CPU and memory figures are the client's.
func serveSandbox() async throws -> Never {
    watchParentThenExit()
    let sandbox = try await DemandSandbox.start()
    emit("\(sandbox.port)")
    while true { try await Task.sleep(for: .seconds(3600)) }
}

/// Exits this process when its stdin reaches end-of-file: the parent (``Child``) holds the pipe's other end, so this
/// happens when the parent ends, even by SIGKILL. Portable (no `prctl`); the blocking read runs on a thread of its
/// own, never on the cooperative pool. Run by hand, `app-bench serve` stops at Ctrl-D (or at once with no stdin).
func watchParentThenExit() {
    let watcher = Thread {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(STDIN_FILENO, &buffer, buffer.count)
            if count == 0 || (count < 0 && errno != EINTR) { exit(0) }
        }
    }
    watcher.name = "parent-watch"
    watcher.start()
}

/// Starts the sandbox child and returns it with the sandbox's root URL.
func startSandboxChild() throws -> (Child, String) {
    let child = try Child(["serve"])
    let port = child.firstLine()
    guard let number = Int(port), number > 0 else { throw BenchError("the sandbox child printed \(port)") }
    return (child, "http://127.0.0.1:\(number)")
}

/// A port that accepts TCP connections in the kernel (backlog 4096) but never `accept`s them, so every request
/// sent there waits forever: a partner that hangs, at no CPU or thread cost in this process.
final class HangingPort {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 4096) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw BenchError("bind/listen: errno \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }
}

/// A benchmark's own failure.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `value` with `digits` decimals.
func fixed(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

/// A progress line on stderr (the tables go to stdout).
func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
