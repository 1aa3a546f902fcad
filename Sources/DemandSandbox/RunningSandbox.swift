import AdMediation
import AdapterKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ObliviousHTTP
import SandboxRouting
import ServiceLifecycle
import Synchronization

/// Settings of the sandbox itself (not of its scenario).
public struct SandboxConfiguration: Sendable {
    /// The loopback address to listen on (any of 127.0.0.0/8 on Linux). Default `127.0.0.1`.
    public var host: String = "127.0.0.1"
    /// Port to listen on; 0 lets the kernel choose. Default 0.
    public var port: Int = 0
    /// Networks that are not built in, each under `/<network>/` (see `SandboxRouteModule`), mounted after the
    /// built-in networks' modules from the registry (`BuiltInNetworks`). A module named like a built-in network
    /// replaces the registry's (its own settings, e.g. `GrowthCatRoutes(apiKeys:)` for other API keys); one named
    /// `admin` or `ohttp` is never reached. Default none.
    public var routeModules: [any SandboxRouteModule] = []
    /// Connections served at once (at least 1). At the cap the listening socket is not read: a new connection waits
    /// in the kernel's accept backlog until one closes, so idle or half-sent connections can never take the last
    /// file descriptors (the common limit is 1 024) and spin the accept loop. One wake-up of the listener accepts up
    /// to 4 connections (NIO's `maxMessagesPerRead`) before the cap is checked again, so at most `maxConnections + 3`
    /// are open. Default 256. Hummingbird's `MaximumAvailableConnections`.
    public var maxConnections: Int = 256
    /// How long a connection may deliver no part of a request before it is closed: a request head not complete
    /// (a slowloris sending a few bytes at a time never completes one), a body that stops, or a kept-alive connection
    /// between requests. A connection whose answer is being prepared (scenario latency, a held answer) is never idle.
    /// Default 30 s (nginx: `client_header_timeout` 60 s, `keepalive_timeout` 75 s; Hummingbird's `idleTimeout`,
    /// off by default). A client reusing a connection the sandbox just closed retries it on a fresh one (curl does).
    public var idleTimeout: Duration = .seconds(30)

    /// ``idleTimeout`` for NIO, from 1 ms to one day.
    var idleTimeAmount: TimeAmount {
        let (seconds, attoseconds) = idleTimeout.components
        let clamped = min(max(seconds, 0), 86_400)
        return .nanoseconds(max(1_000_000, clamped * 1_000_000_000 + attoseconds / 1_000_000_000))
    }

    /// The defaults.
    public init() {}
}

/// A failure to start or use the sandbox.
public struct SandboxError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// A started sandbox: its base URLs, its records, its scenario, and a clean shutdown.
public final class RunningSandbox: Sendable {
    /// The address it listens on.
    public let host: String
    /// The port it listens on.
    public let port: Int
    let state: SandboxState
    private let task: Task<Void, any Error>
    private let listenerClosed: EventLoopFuture<Void>?
    private let connections: SandboxConnections

    init(
        host: String, port: Int, state: SandboxState, task: Task<Void, any Error>,
        listenerClosed: EventLoopFuture<Void>?, connections: SandboxConnections
    ) {
        self.host = host
        self.port = port
        self.state = state
        self.task = task
        self.listenerClosed = listenerClosed
        self.connections = connections
    }

    /// Connections open now (accepted and not yet closed).
    public var openConnections: Int { connections.open.load() }
    /// The most connections that were open at once (at most ``SandboxConfiguration/maxConnections`` + 3).
    public var peakConnections: Int { connections.peak.load() }

    /// `http://HOST:PORT`.
    public var rootURL: String { "http://\(host):\(port)" }
    /// GrowthCat's base URL (append `/v1/sdk/config`, …).
    public var growthcatBaseURL: String { rootURL + "/growthcat" }
    /// MARS's base URL, ending in `/v1/` (append `ads`).
    public var marsBaseURL: String { rootURL + "/mars/v1/" }
    /// The Chartboost-style network's base URL (append `/banner/v1/load`).
    public var chartboostBaseURL: String { rootURL + "/chartboost" }
    /// The app-open network's base URL (append `/appopen/v1/ad`).
    public var appOpenBaseURL: String { rootURL + "/appopen" }
    /// The base URL of the route module `network` (``SandboxConfiguration/routeModules``):
    /// `http://HOST:PORT/<network>`.
    public func moduleBaseURL(_ network: String) -> String { rootURL + "/" + network }
    /// The base URL of the sandbox's OpenRTB bidder `name` (any name; its scenario is the network `name`).
    public func bidderBaseURL(_ name: String) -> String { rootURL + "/openrtb/" + name }
    /// The admin endpoint (`GET/PUT {admin}/scenario`, `GET {admin}/records`, `POST {admin}/reset`).
    public var adminURL: String { rootURL + "/admin" }

    /// A snapshot of what arrived so far.
    public var records: SandboxRecords { state.records }
    /// The current scenario.
    public var scenario: SandboxScenario { state.scenario }
    /// Replaces the scenario (and re-seeds the generator) at runtime.
    public func setScenario(_ scenario: SandboxScenario) { state.setScenario(scenario) }
    /// Forgets every record, the route modules' too.
    public func resetRecords() { state.resetRecords() }
    /// The mounted route module of type `Module` (a built-in network's from the registry, or one of
    /// ``SandboxConfiguration/routeModules``), for the records it keeps: `sandbox.routes(OpenRTBRoutes.self)`.
    public func routes<Module: SandboxRouteModule>(_ type: Module.Type) -> Module? {
        for module in state.routeModules { if let match = module as? Module { return match } }
        return nil
    }

    /// Ends the sandbox, as every component's `shutdown()` does: stops the server and returns once it has finished,
    /// including the close of its listening socket (the server's task can end a moment before NIO has closed it, and
    /// a connection in that moment would be reset, not refused). Idempotent.
    public func shutdown() async {
        task.cancel()
        _ = await task.result
        _ = try? await listenerClosed?.get()
    }
}

extension RunningSandbox: Service {
    /// The running server's lifetime as a swift-service-lifecycle `Service`: returns, after ``shutdown()``, when the
    /// service group shuts down gracefully or the task is cancelled.
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}
