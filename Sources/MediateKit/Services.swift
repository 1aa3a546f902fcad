import AdMediation
import Logging
import ServiceLifecycle

/// Runs `services` in one `ServiceGroup` while `body` runs, then shuts the group down gracefully — whether `body`
/// returns or throws — and returns once every service has ended: the one lifetime of what a command runs in the
/// background. The group shuts services down in reverse order, so list what others depend on first (the HTTP client,
/// then the networks that send through it: a bidder's last notices and a GrowthCat flush in progress still go out).
/// Ordering holds for the graceful shutdown this triggers; cancelling the caller's task cancels every service at once.
package func withServices<T: Sendable>(
    _ services: [any Service], logger: Logger = Logger(label: "mediate.services"), _ body: () async throws -> T
) async throws -> T {
    let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }, logger: logger))
    return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { tasks in
        tasks.addTask { try await group.run() }
        return try await withCleanup {
            try await body()
        } finally: {
            await group.triggerGracefulShutdown()
            // A service that failed has been logged by the group; the command's own outcome is what is reported.
            try? await tasks.waitForAll()
        }
    }
}
