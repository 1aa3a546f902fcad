import AdapterKit
import Foundation
import HTTPTypes
import Hummingbird
import ObliviousHTTP
import SandboxRouting

/// Oblivious HTTP (RFC 9458) under `/ohttp/`: the gateway's key configuration, a relay and the gateway.
///
/// - `GET /ohttp/keys` — `application/ohttp-keys` with the current key.
/// - `POST /ohttp/relay` — the relay: records the encapsulated body as received and passes it, and nothing about
///   the client (no address, no headers), to the gateway; answers what the gateway answered.
/// - `POST /ohttp/gateway` — the gateway: decrypts, routes the binary HTTP request to the network routes
///   (`/mars/`, `/growthcat/`, `/chartboost/`, `/appopen/`; never `/admin/`), and encrypts the answer.
///   An unknown key id is `422` with the `ohttp-key` problem type (RFC 9458 §5.3), a request that does not decrypt
///   or is not binary HTTP is `400`.
extension SandboxState {
    func ohttp(_ incoming: Incoming, context: SandboxContext) async -> Response {
        switch (incoming.method, incoming.path) {
        case ("GET", "/ohttp/keys"):
            let configuration = mutable.withLock { $0.ohttpGateway.configuration }
            return Self.bytes(
                200, ObliviousHTTPKeyConfiguration.listEncoded([configuration]),
                contentType: ObliviousHTTPClient.keysMediaType)
        case ("POST", "/ohttp/relay"):
            // The relay forwards the body only: the gateway learns nothing about who sent it.
            let answer = await ohttpGateway(
                contentType: incoming.header("Content-Type"), body: incoming.body, context: context)
            record {
                $0.ohttpRelayed.append(
                    OHTTPRelayRecord(
                        contentType: incoming.header("Content-Type"), body: incoming.body, status: answer.status))
            }
            return Self.bytes(answer.status, answer.body, contentType: answer.contentType)
        case ("POST", "/ohttp/gateway"):
            let answer = await ohttpGateway(
                contentType: incoming.header("Content-Type"), body: incoming.body, context: context)
            return Self.bytes(answer.status, answer.body, contentType: answer.contentType)
        default:
            return Self.error(404, "not_found", "no OHTTP route \(incoming.method) \(incoming.path)")
        }
    }

    /// Rotates the gateway's key: a new key pair under the next key id. Requests under the old id are refused.
    func rotateOHTTPKey() -> UInt8 {
        mutable.withLock { m in
            let next = m.ohttpGateway.configuration.keyID == 255 ? 1 : m.ohttpGateway.configuration.keyID + 1
            m.ohttpGateway = ObliviousHTTPGateway(keyID: next)
            return next
        }
    }

    private struct GatewayAnswer {
        var status: Int
        var body: Data
        var contentType: String
    }

    private func ohttpGateway(contentType: String?, body: Data, context: SandboxContext) async -> GatewayAnswer {
        func problem(_ status: Int, _ type: String, _ title: String) -> GatewayAnswer {
            let data = SandboxReply.encoded(["type": .string(type), "title": .string(title)] as JSONValue)
            return GatewayAnswer(status: status, body: data, contentType: "application/problem+json")
        }
        guard contentType?.lowercased().hasPrefix(ObliviousHTTPClient.requestMediaType) == true else {
            return problem(415, "about:blank", "the content type must be \(ObliviousHTTPClient.requestMediaType)")
        }
        let gateway = mutable.withLock { $0.ohttpGateway }
        let opened: (request: Data, context: ObliviousHTTPGatewayContext)
        do {
            opened = try gateway.decapsulate(body)
        } catch  where error.code == .unknownKey {
            return problem(422, "https://iana.org/assignments/http-problem-types#ohttp-key", "key identifier unknown")
        } catch {
            return problem(400, "about:blank", "the encapsulated request does not decrypt")
        }
        guard let inner = try? BinaryHTTPRequest(decoding: opened.request, maxBytes: 1 << 20) else {
            return problem(400, "about:blank", "the decrypted request is not a known-length binary HTTP request")
        }
        let routable = ["/mars/", "/growthcat/", "/chartboost/", "/appopen/"]
        // The path is the client's (decrypted) input: split once, never index past what the split gave.
        let parts = inner.path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let pathOnly = String(parts.first ?? "")
        let query = parts.count > 1 ? String(parts[1]) : nil
        let response: Response
        if routable.contains(where: { pathOnly.hasPrefix($0) }) {
            var headers = HTTPFields()
            for field in inner.headers {
                if let name = HTTPField.Name(field.name) { headers.append(HTTPField(name: name, value: field.value)) }
            }
            record {
                $0.ohttpGatewayRequests.append(
                    OHTTPGatewayRecord(
                        method: inner.method, path: pathOnly,
                        headers: Dictionary(inner.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })))
                $0.requestCounts["\(inner.method) \(pathOnly)", default: 0] += 1
            }
            response = await dispatch(
                Incoming(
                    method: inner.method, path: pathOnly, pathWithQuery: inner.path,
                    query: Self.decodeQuery(query), headers: headers, body: inner.content), context: context)
        } else {
            response = Self.error(404, "not_found", "the gateway routes only to the networks, not \(pathOnly)")
        }
        let collected = await Self.collect(response)
        let answer = BinaryHTTPResponse(status: collected.status, headers: collected.headers, content: collected.body)
        guard let sealed = try? opened.context.encapsulate(answer.encoded()) else {
            return problem(500, "about:blank", "the answer could not be encrypted")
        }
        return GatewayAnswer(status: 200, body: sealed, contentType: ObliviousHTTPClient.responseMediaType)
    }

    /// A route's response as status, fields and bytes.
    private static func collect(_ response: Response) async -> (status: Int, headers: [BinaryHTTPField], body: Data) {
        let sink = BodySink()
        try? await response.body.write(CollectingWriter(sink: sink))
        let headers = response.headers.map { BinaryHTTPField($0.name.canonicalName, $0.value) }
        return (response.status.code, headers, sink.data)
    }

    static func bytes(_ status: Int, _ data: Data, contentType: String) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = contentType
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Collects a response body in memory (the gateway encrypts the whole answer).
private final class BodySink: @unchecked Sendable {
    // Written only by the one writer that `Response.body.write` drives, sequentially, then read after it returns.
    var data = Data()
}

private struct CollectingWriter: ResponseBodyWriter {
    let sink: BodySink

    mutating func write(_ buffer: ByteBuffer) async throws {
        sink.data.append(contentsOf: buffer.readableBytesView)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
