extension Task where Success == Never, Failure == Never {
    /// Lets other tasks run while a test polls for asynchronous work to finish (not a time-based wait: the logic
    /// under test runs on an injected clock). A short real pause keeps a polling loop from starving the two-thread
    /// cooperative pool.
    static func pollPause() async {
        try? await Task.sleep(for: .microseconds(200))
    }
}
