import AdMediation

extension AdError {
    /// Maps an HTTP status the contract calls an error onto the taxonomy (400/401/403/429/5xx; others → server): what
    /// ``RequestRunner`` throws for a status it does not accept, for adapters that read a status themselves.
    public static func http(status: Int, retryAfter: Duration? = nil, message: String) -> AdError {
        switch status {
        case 400: AdError(.badRequest, message)
        case 401: AdError(.unauthorized, message)
        case 403: AdError(.forbidden, message)
        case 429: AdError(.rateLimited(retryAfter: retryAfter), message)
        default: AdError(.server(status: status), message)
        }
    }
}
