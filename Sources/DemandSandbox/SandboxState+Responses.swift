import AdMediation
import AdapterKit
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ObliviousHTTP
import SandboxRouting
import ServiceLifecycle
import Synchronization

/// How the sandbox answers: the scenario's draws, latency and faults applied to a response.
extension SandboxState {
    // MARK: Responses and faults

    static func json(_ status: Int, _ data: Data?, headers: [(String, String)] = []) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        for (name, value) in headers { if let n = HTTPField.Name(name) { fields[n] = value } }
        let data = data ?? Data("{}".utf8)
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// `value` as JSON, keys sorted (the same bytes for the same value).
    static func json(_ status: Int, object value: JSONValue, headers: [(String, String)] = []) -> Response {
        json(status, SandboxReply.encoded(value), headers: headers)
    }

    static func error(_ status: Int, _ code: String, _ message: String, headers: [(String, String)] = []) -> Response {
        json(status, object: ["error": ["code": .string(code), "message": .string(message)]], headers: headers)
    }

    static func empty(_ status: Int) -> Response {
        Response(status: .init(code: status), headers: [:], body: .init())
    }

    /// Resets the request's connection (SO_LINGER 0, then close: a TCP RST) without an answer. The response returned
    /// is never written.
    static func resetConnection(_ context: SandboxContext) async -> Response {
        let channel = context.channel
        if let provider = channel as? any SocketOptionProvider {
            try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        }
        try? await channel.close().get()
        return empty(500)
    }

    /// Applies the drawn latency, then the fault if one was drawn; returns nil when the request proceeds normally.
    func applyDraw(_ draw: Draw, validBody: @autoclosure () -> Data, context: SandboxContext) async -> Response? {
        if draw.latency > .zero { try? await Task.sleep(for: draw.latency) }
        guard let fault = draw.fault else { return nil }
        switch fault.kind {
        case .status:
            let status = Fault.statuses.contains(fault.status) ? fault.status : 500
            let headers = status == 429 ? [("Retry-After", "\(min(max(0, fault.retryAfterS), 604_800))")] : []
            return Self.error(status, "injected_fault", "injected status \(status)", headers: headers)
        case .malformedJSON:
            return Self.json(200, Data(#"{"ads": [ {"creative": "#.utf8))
        case .wrongShape:
            return Self.json(200, Data(#"{"ads": "not-a-list", "placements": 42, "error": null}"#.utf8))
        case .oversized:
            let padding = Data(repeating: 0x20, count: 9 << 20)
            return Self.json(200, Data(#"{"padding": ""#.utf8) + padding + Data(#""}"#.utf8))
        case .truncated:
            let full = validBody()
            let half = full.prefix(max(1, full.count / 2))
            var fields = HTTPFields()
            fields[.contentType] = "application/json; charset=utf-8"
            return Response(
                status: .ok, headers: fields,
                body: ResponseBody(contentLength: full.count) { writer in
                    try await writer.write(ByteBuffer(bytes: half))
                    throw SandboxError("injected truncation")
                })
        case .reset:
            let full = validBody()
            let part = full.prefix(max(1, full.count / 2))
            let channel = context.channel
            var fields = HTTPFields()
            fields[.contentType] = "application/json; charset=utf-8"
            return Response(
                status: .ok, headers: fields,
                body: ResponseBody(contentLength: full.count) { writer in
                    try await writer.write(ByteBuffer(bytes: part))
                    // SO_LINGER 0 makes close() send a TCP RST instead of a FIN.
                    if let provider = channel as? any SocketOptionProvider {
                        try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
                    }
                    try? await channel.close().get()
                    throw SandboxError("injected reset")
                })
        case .slowDrip:
            let full = validBody()
            var fields = HTTPFields()
            fields[.contentType] = "application/json; charset=utf-8"
            return Response(
                status: .ok, headers: fields,
                body: ResponseBody(contentLength: full.count) { writer in
                    var offset = 0
                    while offset < full.count {
                        let end = min(full.count, offset + 16)
                        try await writer.write(ByteBuffer(bytes: full[offset..<end]))
                        offset = end
                        if offset < full.count { try await Task.sleep(for: .milliseconds(40)) }
                    }
                    try await writer.finish(nil)
                })
        }
    }
}
