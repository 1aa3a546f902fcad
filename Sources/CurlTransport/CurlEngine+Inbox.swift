import AdTransport
import CCurl
import Foundation

// The engine's hand-over state: what callers and the engine thread exchange under the inbox lock, and what the
// thread keeps of a finished transfer until it resumes its caller. The engine's mutable state stays private to
// `CurlEngine.swift`; only these types are visible to the module.

extension CurlEngine {
    /// What callers hand the engine thread, under one lock (``CurlEngine``'s `inbox`).
    struct Inbox {
        var adds: [Transfer] = []
        var cancels: [Transfer] = []
        /// Reset easy handles kept for later requests.
        var idle: [EasyHandle] = []
        var stopRequested = false
        var stopped = false
        /// Whether the first request has set libcurl up and started the thread, or why it could not.
        var start = Start.notStarted
        /// A wake-up was claimed since the engine last drained the inbox.
        var wakePending = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []

        /// Whether the caller should signal the engine: the first hand-over since the last drain does.
        mutating func claimWake() -> Bool {
            if wakePending { return false }
            wakePending = true
            return true
        }
    }

    /// The engine's start: made by the first request, never by `init`.
    enum Start {
        case notStarted
        case running
        case failed(HTTPClientError)
    }

    /// A finished transfer's caller and what it gets, resumed once the engine has put its handle back.
    struct Resumption {
        var continuation: UnsafeContinuation<HTTPResponse, any Error>
        var result: Result<HTTPResponse, HTTPClientError>
    }
}
