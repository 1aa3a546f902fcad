import AdMediation
import AdMediationTesting
import CurlTransport
import Foundation
import TestSupport
import Testing

/// An echo handler: replies with the method, the body, and an `X-Seen-*` header per request header.
let echo: @Sendable (LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Action = { request in
    var headers = [("Content-Type", "text/plain"), ("X-Method", request.method), ("X-Target", request.target)]
    for field in request.headers { headers.append(("X-Seen-\(field.name)", field.value)) }
    return .respond(.init(status: 200, headers: headers, body: request.body))
}
