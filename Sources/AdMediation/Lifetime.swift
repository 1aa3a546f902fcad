/// Runs `body`, then `cleanup`, whichever way `body` ends — it returns, throws, or its task is cancelled — and
/// returns or rethrows what `body` gave: the project's one `asyncDo`/`finally`. Every `with…` scope (a transport, a
/// sandbox, a GrowthCat client, the CLI's environment) is built on it, so "shut down" is done in one place, once,
/// after the work that needed the resource and before the result is used.
package func withCleanup<T: Sendable>(
    _ body: () async throws -> T, finally cleanup: () async -> Void
) async throws -> T {
    let result: Result<T, any Error>
    do { result = .success(try await body()) } catch { result = .failure(error) }
    await cleanup()
    return try result.get()
}
