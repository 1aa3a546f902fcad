import AdMediation
import AdTransport
import Foundation

/// An ``AdMediation/HTTPClient`` that sends every request through an Oblivious HTTP relay (RFC 9458): each request
/// is encoded as binary HTTP, encapsulated for the gateway's key, and POSTed to the relay; the encapsulated answer
/// is opened and returned as the target's response. The relay sees only ciphertext, the gateway never sees the
/// client's address. Nothing ever falls back to a direct request.
///
/// The gateway's key configuration is fetched from `keyConfigurationURL` on first use and kept; when the gateway
/// answers that the key is unknown (a rotated key), it is fetched again once and the request retried once.
public final class ObliviousHTTPRelayClient: HTTPClient {
    private let transport: any HTTPClient
    private let relayURL: String
    private let keyConfigurationURL: String
    private let keys = LockedValue<ObliviousHTTPKeyConfiguration?>(nil)

    /// A client that reaches the relay and the key configuration through `transport`.
    public init(relayURL: String, keyConfigurationURL: String, transport: any HTTPClient) {
        self.relayURL = relayURL
        self.keyConfigurationURL = keyConfigurationURL
        self.transport = transport
    }

    /// Sends `request` through the relay. Transport failures reaching the relay are the transport's errors;
    /// OHTTP failures are `HTTPClientError` with `ohttpRelay` (the relay or gateway refused: its status and problem),
    /// `ohttpKeyConfiguration` or `ohttpDecryption`.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let binary = try Self.binaryRequest(request).encoded()
        let configuration = try await keyConfiguration(refresh: false)
        do {
            return try await exchange(binary, configuration: configuration, timeout: request.timeout)
        } catch is KeyRejected {
            // The gateway no longer has this key: fetch the configuration again, once, and retry once.
            let fresh = try await keyConfiguration(refresh: true)
            do {
                return try await exchange(binary, configuration: fresh, timeout: request.timeout)
            } catch is KeyRejected {
                throw HTTPClientError(
                    .ohttpKeyConfiguration,
                    "the gateway rejected key \(fresh.keyID) even after the configuration was fetched again")
            }
        }
    }

    private struct KeyRejected: Error {}

    private func exchange(_ binary: Data, configuration: ObliviousHTTPKeyConfiguration, timeout: Duration?) async throws
        -> HTTPResponse
    {
        let (encapsulated, context): (Data, ObliviousHTTPResponseContext)
        do {
            (encapsulated, context) = try ObliviousHTTPClient.encapsulate(binary, for: configuration)
        } catch {
            throw HTTPClientError(.ohttpKeyConfiguration, error.message)
        }
        let answer = try await transport.send(
            HTTPRequest(
                method: .post, url: relayURL, headers: ["Content-Type": ObliviousHTTPClient.requestMediaType],
                body: encapsulated, timeout: timeout))
        guard answer.status == 200 else {
            if answer.status == 400 || answer.status == 422,
                String(decoding: answer.body.prefix(4096), as: UTF8.self).contains(Self.keyProblemType)
            {
                throw KeyRejected()
            }
            throw HTTPClientError(.ohttpRelay, "the relay answered \(answer.status): \(answer.errorSummary)")
        }
        guard answer.headers["Content-Type"]?.lowercased().hasPrefix(ObliviousHTTPClient.responseMediaType) == true
        else {
            throw HTTPClientError(
                .ohttpRelay,
                "the relay answered 200 with \(answer.headers["Content-Type"] ?? "no content type"), not "
                    + "\(ObliviousHTTPClient.responseMediaType)"
            )
        }
        let response: BinaryHTTPResponse
        do {
            response = try BinaryHTTPResponse(decoding: try context.decapsulate(answer.body))
        } catch {
            throw HTTPClientError(.ohttpDecryption, error.message)
        }
        var headers = HTTPHeaders()
        for field in response.headers { headers.add(name: field.name, value: field.value) }
        return HTTPResponse(status: response.status, headers: headers, body: response.content)
    }

    /// The problem type a gateway answers for an unknown key (RFC 9458 §9.5).
    static let keyProblemType = "https://iana.org/assignments/http-problem-types#ohttp-key"

    private func keyConfiguration(refresh: Bool) async throws -> ObliviousHTTPKeyConfiguration {
        if !refresh, let known = keys.withLock({ $0 }) { return known }
        let answer = try await transport.send(HTTPRequest(url: keyConfigurationURL, timeout: .seconds(10)))
        guard answer.status == 200 else {
            throw HTTPClientError(.ohttpKeyConfiguration, "GET \(keyConfigurationURL) answered \(answer.status)")
        }
        let configurations: [ObliviousHTTPKeyConfiguration]
        do {
            configurations = try ObliviousHTTPKeyConfiguration.list(decoding: answer.body)
        } catch {
            throw HTTPClientError(.ohttpKeyConfiguration, error.message)
        }
        guard
            let usable = configurations.first(where: {
                $0.suites.contains(ObliviousHTTPKeyConfiguration.supportedSuite)
            })
        else {
            throw HTTPClientError(.ohttpKeyConfiguration, "no key offers HKDF-SHA256 with AES-128-GCM")
        }
        keys.withLock { $0 = usable }
        return usable
    }

    /// The binary HTTP form of `request`: method, scheme, authority and path from its URL, its headers and body.
    static func binaryRequest(_ request: HTTPRequest) throws -> BinaryHTTPRequest {
        guard let components = URLComponents(string: request.url), let scheme = components.scheme,
            let host = components.host
        else {
            throw HTTPClientError(.invalidURL, "not an absolute URL: \(request.url)")
        }
        let authority = components.port.map { "\(host):\($0)" } ?? host
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        return BinaryHTTPRequest(
            method: request.method.rawValue, scheme: scheme, authority: authority, path: path,
            headers: request.headers.map { BinaryHTTPField($0.name.lowercased(), $0.value) },
            content: request.body ?? Data())
    }
}
