import AdMediation
import AdTransport
import AdapterKit
import Foundation

// The MARS client's failures as AdError reasons.

extension AdError.Reason {
    /// The request could not be built (empty or duplicate placements): code ``AdError/Code/configuration``.
    public static let marsBuildRequest = AdError.Reason(domain: "mars", name: "build_request")
    /// MARS answered 400; the message holds the body.
    public static let marsBadRequest = AdError.Reason(domain: "mars", name: "bad_request")
    /// MARS answered 5xx; the message holds the body.
    public static let marsServer = AdError.Reason(domain: "mars", name: "server")
    /// MARS answered another status but 200 (401, 403, 429, …); the message holds the body.
    public static let marsUnexpectedStatus = AdError.Reason(domain: "mars", name: "unexpected_status")
    /// The transport failed with `code` (`mars.transport_connection_refused`).
    public static func marsTransport(_ code: HTTPClientError.Code) -> AdError.Reason {
        AdError.Reason(domain: "mars", name: "transport_\(code.rawValue)")
    }
    /// The body is not a JSON object, or breaks a limit.
    public static let marsJSON = AdError.Reason(domain: "mars", name: "json")
    /// A callback URL is not a valid absolute URL.
    public static let marsInvalidCallbackURL = AdError.Reason(domain: "mars", name: "invalid_callback_url")
    /// OHTTP was requested but no relay is configured.
    public static let marsOHTTPNotConfigured = AdError.Reason(domain: "mars", name: "ohttp_not_configured")
    /// The cache could not be cleared.
    public static let marsCache = AdError.Reason(domain: "mars", name: "cache")
}

/// The MARS client's failures, as the seed's `MozAdsClientApiError` names them; each becomes an ``AdError`` with its
/// code, a ``AdError/Reason`` and the seed's message (`Bad request (400): <body>`; a request that cannot be built keeps
/// the seed's own sentence).
enum MarsFailure {
    case buildRequest, badRequest, json, invalidCallbackURL, ohttpNotConfigured, cache
    case server(status: Int)
    case unexpected(status: Int)
    case transport(HTTPClientError.Code)
}

extension AdError {
    /// The error for a MARS client failure.
    static func mars(code: MarsFailure, message: String) -> AdError {
        switch code {
        case .badRequest: AdError(.badRequest, "Bad request (400): \(message)", reason: .marsBadRequest)
        case .server(let status):
            AdError(.server(status: status), "Server error (\(status)): \(message)", reason: .marsServer)
        case .unexpected(let status):
            AdError(
                AdError.http(status: status, message: "").code, "Unexpected response (\(status)): \(message)",
                reason: .marsUnexpectedStatus)
        case .buildRequest:
            AdError(.configuration, message, reason: .marsBuildRequest)
        case .transport(let kind):
            AdError(
                AdError(HTTPClientError(kind, "")).code, "Request failed (\(kind.rawValue)): \(message)",
                reason: .marsTransport(kind))
        case .json: AdError(.invalidResponse, "JSON error: \(message)", reason: .marsJSON)
        case .invalidCallbackURL:
            AdError(.configuration, "Invalid callback URL: \(message)", reason: .marsInvalidCallbackURL)
        case .ohttpNotConfigured:
            AdError(.unsupported, "OHTTP relay not configured: \(message)", reason: .marsOHTTPNotConfigured)
        case .cache: AdError(.storage, "Failed to clear cache: \(message)", reason: .marsCache)
        }
    }
}
