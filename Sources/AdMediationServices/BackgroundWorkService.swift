import AdMediation
import ServiceLifecycle

/// A ``AdMediation/BackgroundWork`` component as a swift-service-lifecycle `Service`: its `run()` waits for the
/// group's graceful shutdown (or the task's cancellation), then calls the component's `shutdown()` and returns once
/// it has ended.
///
/// This module is opt-in: the library's own modules do not depend on swift-service-lifecycle, so an app that does not
/// run a `ServiceGroup` does not compile it. A server or tool that does (the `mediate` CLI) wraps each component:
/// `ServiceGroup(services: [BackgroundWorkService(http), BackgroundWorkService(network)], logger: logger)`.
public struct BackgroundWorkService: Service {
    /// The component whose work the service ends.
    public let work: any BackgroundWork

    /// The service of `work`.
    public init(_ work: any BackgroundWork) { self.work = work }

    /// Waits for the group's graceful shutdown or the task's cancellation, then shuts `work` down.
    public func run() async throws {
        try? await gracefulShutdown()
        await work.shutdown()
    }
}
