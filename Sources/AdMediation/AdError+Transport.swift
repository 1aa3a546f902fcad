import AdTransport
import Foundation

// The core's errors over the transport contract (AdTransport, below the core): a transport failure and an outside body
// that breaks its limits become an `AdError`, the one error model an app sees.

extension AdError {
    /// Maps a transport failure onto the ad taxonomy: timeout → timeout, cancelled → cancelled,
    /// unreadable response → invalidResponse, everything else → network.
    public init(_ error: HTTPClientError) {
        switch error.code {
        case .timeout: self.init(.timeout, error.message)
        case .cancelled: self.init(.cancelled, error.message)
        case .invalidResponse, .responseTooLarge:
            self.init(.invalidResponse, "\(error.code.rawValue): \(error.message)")
        case .insecureURL, .invalidURL, .invalidHeader, .ohttpKeyConfiguration:
            self.init(.configuration, "\(error.code.rawValue): \(error.message)")
        case .ohttpDecryption: self.init(.invalidResponse, "\(error.code.rawValue): \(error.message)")
        default: self.init(.network, "\(error.code.rawValue): \(error.message)")
        }
    }
}

extension JSONLimits {
    /// Throws ``AdError/Code/invalidResponse`` naming the limit when `data` breaks one; `what` names the body.
    public func check(_ data: Data, _ what: String) throws(AdError) {
        if let violation = violation(in: data) { throw AdError(.invalidResponse, "\(what): \(violation)") }
    }
}
