/// Runs `body`, then `cleanup`, whichever way `body` ends — it returns, throws, or its task is cancelled — and
/// returns or rethrows what `body` gave: the project's one `asyncDo`/`finally`. Every `with…` scope (a transport, a
/// sandbox, a GrowthCat client, the CLI's environment) is built on it, so "shut down" is done in one place, once,
/// after the work that needed the resource and before the result is used. Public for adapters and tools that scope a
/// resource the same way.
public func withCleanup<T: Sendable>(
    _ body: () async throws -> T, finally cleanup: () async -> Void
) async throws -> T {
    let result: Result<T, any Error>
    do { result = .success(try await body()) } catch { result = .failure(error) }
    await cleanup()
    return try result.get()
}

/// A component that works in the background — a transport's engine, an adapter's delivery loop or notice sender, the
/// app-open manager — and ends that work in ``shutdown()``: it finishes what it promised within its documented bound,
/// returns once the work has ended, and is idempotent. Nothing starts in such a component's `init`.
///
/// The conformance is how whoever builds a network knows it has work to end (a factory's result, the `mediate` CLI):
/// no separate registration that a network could forget. Apps call ``shutdown()`` when they are done with it; a
/// server that runs swift-service-lifecycle's `ServiceGroup` wraps each one in the opt-in `AdMediationServices`
/// module's `BackgroundWorkService`.
public protocol BackgroundWork: Sendable {
    /// Ends the background work (see ``BackgroundWork``). Idempotent.
    func shutdown() async
}
