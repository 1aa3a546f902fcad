import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a child process did.
public struct ChildResult: Sendable {
    /// The exit code, or 128 + the signal number when a signal ended it.
    public var status: Int32
    /// Everything it wrote to stdout.
    public var out: String
    /// Everything it wrote to stderr.
    public var err: String
    /// True when the deadline passed and the child was killed.
    public var timedOut: Bool
    /// True when a signal ended it.
    public var signalled: Bool
}

/// An error starting a child.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// What failed.
    public var description: String
    /// An error saying `description`.
    public init(description: String) { self.description = description }
}

/// Child processes for tests, spawned with `posix_spawnp` and watched by a thread of their own, so waiting for one
/// never blocks the cooperative pool (a blocked pool thread stalls every other test on a 2-core machine). Every run has
/// a deadline: past it the child is killed and the result says so.
public enum ChildProcess {
    /// Runs `executable` (a path, or a name looked up in `PATH`) to its end, reading stdout and stderr fully.
    /// `killAfter`: send SIGKILL at that moment of the child's life (crash tests). `deadline`: kill it then and report
    /// `timedOut`. `killWhen`: SIGKILL as soon as stdout so far satisfies it (a server that prints and runs on).
    /// `interruptWhen`: `interruptSignal` (SIGINT by default: Ctrl-C mid-run) once, as soon as stderr so far
    /// satisfies it.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        killAfter: Duration? = nil, killWhen: (@Sendable (String) -> Bool)? = nil,
        interruptWhen: (@Sendable (String) -> Bool)? = nil, interruptSignal: Int32 = SIGINT,
        deadline: Duration = .seconds(120)
    ) async throws -> ChildResult {
        let spawned = try spawn(executable, arguments, environment: environment, capture: true)
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    returning: watch(
                        spawned, killAfter: killAfter, killWhen: killWhen, interruptWhen: interruptWhen,
                        interruptSignal: interruptSignal, deadline: deadline))
            }
            thread.start()
        }
    }

    /// Starts a long-lived child whose output goes to /dev/null (a server); stop it with ``Running/kill()``.
    public static func start(_ executable: String, _ arguments: [String]) throws -> Running {
        Running(pid: try spawn(executable, arguments, environment: nil, capture: false).pid)
    }

    /// A started child.
    public struct Running: Sendable {
        /// Its process id.
        public let pid: pid_t

        /// SIGKILL, then reaps it (a killed child exits at once, so the wait is short).
        public func kill() {
            _ = Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
    }

    struct Spawned {
        let pid: pid_t
        let out: Int32
        let err: Int32
    }

    private static let spawnLock = NSLock()

    static func spawn(_ executable: String, _ arguments: [String], environment: [String: String]?, capture: Bool) throws
        -> Spawned
    {
        // One spawn at a time: a pipe is created and marked close-on-exec under this lock, so no other child spawned
        // here inherits its write end (which would hold the reader's EOF back until that other child exits).
        spawnLock.lock()
        defer { spawnLock.unlock() }
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        if capture {
            guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else {
                throw ChildProcessError(description: "pipe failed: errno \(errno)")
            }
            for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if capture {
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        closeInheritedDescriptors(&actions)
        // The test runner ignores SIGPIPE and its threads may block signals; the child starts with neither.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), defaults = sigset_t()
        sigemptyset(&noSignals)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        if capture {
            close(outPipe[1])
            close(errPipe[1])
        }
        guard result == 0 else {
            if capture {
                close(outPipe[0])
                close(errPipe[0])
            }
            throw ChildProcessError(description: "posix_spawnp \(executable) failed: errno \(result)")
        }
        return Spawned(pid: pid, out: outPipe[0], err: errPipe[0])
    }

    /// Reads both pipes to their end with `poll` (never blocking on one while the other fills), kills at `killAfter`
    /// or at the deadline, then reaps the child.
    static func watch(
        _ child: Spawned, killAfter: Duration?, killWhen: (@Sendable (String) -> Bool)?,
        interruptWhen: (@Sendable (String) -> Bool)? = nil, interruptSignal: Int32 = SIGINT, deadline: Duration
    ) -> ChildResult {
        let start = ContinuousClock.now
        var out = [UInt8](), err = [UInt8]()
        var open: [Int32] = [child.out, child.err]
        var killed = false, timedOut = false, interrupted = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !open.isEmpty {
            let elapsed = ContinuousClock.now - start
            if let killAfter, !killed, elapsed >= killAfter {
                _ = kill(child.pid, SIGKILL)
                killed = true
            }
            if !timedOut, elapsed >= deadline {
                _ = kill(child.pid, SIGKILL)
                timedOut = true
            }
            var next = deadline - elapsed
            if let killAfter, !killed { next = min(next, killAfter - elapsed) }
            let waitMs =
                timedOut
                ? 1000
                : Int32(
                    max(
                        1,
                        min(1000, next.components.seconds * 1000 + next.components.attoseconds / 1_000_000_000_000_000))
                )
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), waitMs)
            if ready < 0 && errno != EINTR { break }
            for entry in fds where entry.revents != 0 {
                let count = read(entry.fd, &buffer, buffer.count)
                if count > 0 {
                    if entry.fd == child.out {
                        out += buffer[0..<count]
                        if let killWhen, !killed, killWhen(String(decoding: out, as: UTF8.self)) {
                            _ = kill(child.pid, SIGKILL)
                            killed = true
                        }
                    } else {
                        err += buffer[0..<count]
                        if let interruptWhen, !interrupted, interruptWhen(String(decoding: err, as: UTF8.self)) {
                            _ = kill(child.pid, interruptSignal)
                            interrupted = true
                        }
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(entry.fd)
                    open.removeAll { $0 == entry.fd }
                }
            }
        }
        open.forEach { close($0) }
        var status: Int32 = 0
        while waitpid(child.pid, &status, 0) == -1 && errno == EINTR {}
        let signalled = (status & 0x7f) != 0 && (status & 0x7f) != 0x7f
        let code = signalled ? 128 + (status & 0x7f) : (status >> 8) & 0xff
        return ChildResult(
            status: code, out: String(decoding: out, as: UTF8.self), err: String(decoding: err, as: UTF8.self),
            timedOut: timedOut, signalled: signalled)
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+; not in Swift's Glibc module), looked up at run time.
private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
private let addCloseFrom: AddCloseFrom? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
    else { return nil }
    return unsafeBitCast(symbol, to: AddCloseFrom.self)
}()

/// The child gets stdin, stdout and stderr only. Without this it inherits every descriptor the test process has open
/// without close-on-exec — SwiftNIO's listening sockets among them on Linux — and a sandbox's port stays bound until
/// the child exits, seconds after that sandbox's `shutdown()` returned (the cause of the sandbox scope test's rare
/// "port still held" failures under the full suite).
private func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    _ = addCloseFrom?(&actions, 3)
}
