import AdMediation
import AdMediationTesting
import AdTransport
import CurlShim
import CurlTransport
import Foundation
import TestSupport
import Testing

@Suite("Security defaults", .serialized, .timeLimit(.minutes(2)))
struct SecurityTests {
    @Test(arguments: TransportKind.allCases)
    func plainHTTPToARemoteHostIsRefusedByDefault(kind: TransportKind) async throws {
        let client = kind.make()
        let error = await transportError { try await client.send(HTTPRequest(url: "http://example.com/ads")) }
        #expect(error?.code == .insecureURL)
        await client.shutdown()
    }

    @Test(arguments: TransportKind.allCases)
    func unsupportedSchemeIsRefused(kind: TransportKind) async throws {
        let client = kind.make()
        let error = await transportError { try await client.send(HTTPRequest(url: "ftp://127.0.0.1/file")) }
        #expect(error?.code == .insecureURL)
        await client.shutdown()
    }

    @Test func sigpipeIsIgnoredOnceACurlClientExists() async throws {
        let client = CurlHTTPClient()
        #expect(curlshim_sigpipe_ignored() == 1)
        await client.shutdown()
    }

    @Test(arguments: TransportKind.allCases)
    func environmentProxiesAreIgnored(kind: TransportKind) async throws {
        let reason = "the variables are process-wide: the other tests' clients would use the proxy meanwhile"
        if skipping(kind, for: .proxyFromEnvironment, because: reason) { return }
        let proxy = try LoopbackHTTPServer { request in .respond(.text("via-proxy \(request.target)")) }
        defer { proxy.stop() }
        try await withServer(kind, .init(), { _ in .respond(.text("direct")) }) { server, client in
            // While the variables are set, no client that reads them (URLSession on Linux) sends anything.
            let direct = try await ProxyEnvironment.gate.exclusively {
                for name in ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"] { setenv(name, proxy.baseURL, 1) }
                defer { for name in ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"] { unsetenv(name) } }
                return try await client.send(HTTPRequest(url: server.baseURL + "/x"))
            }
            #expect(String(decoding: direct.body, as: UTF8.self) == "direct")
            #expect(proxy.requestsReceived == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aConfiguredProxyIsUsed(kind: TransportKind) async throws {
        let proxy = try LoopbackHTTPServer { request in .respond(.text("via-proxy \(request.target)")) }
        defer { proxy.stop() }
        try await withServer(kind, .init(proxy: proxy.baseURL), { _ in .respond(.text("direct")) }) {
            server, proxied in
            let response = try await proxied.send(HTTPRequest(url: server.baseURL + "/x"))
            await checking(kind, unless: .proxyFromEnvironment) {
                #expect(String(decoding: response.body, as: UTF8.self) == "via-proxy \(server.baseURL)/x")
            }
        }
    }

    @Test(arguments: TransportKind.allCases)
    func tlsPeerVerificationRejectsAnUntrustedCertificate(kind: TransportKind) async throws {
        let tls = try await SelfSignedTLSServer.start()
        defer { tls.stop() }
        let strict = kind.make()
        let error = await transportError { try await strict.send(HTTPRequest(url: tls.url, timeout: .seconds(5))) }
        #expect(error?.code == .tls, "\(String(describing: error))")
        await strict.shutdown()
    }

    /// Curl only: URLSession has no per-client CA file (on Apple platforms a `SecTrust` delegate would be needed;
    /// FoundationNetworking offers none), so this rule is not part of the shared contract.
    @Test func aConfiguredCACertificateIsTrustedByCurl() async throws {
        let tls = try await SelfSignedTLSServer.start()
        defer { tls.stop() }

        var configuration = CurlHTTPClient.Configuration()
        configuration.caCertificatesPath = tls.certificatePath
        let trusting = CurlHTTPClient(configuration: configuration)
        let response = try await trusting.send(HTTPRequest(url: tls.url, timeout: .seconds(5)))
        #expect(response.status == 200)
        await trusting.shutdown()
    }
}

/// `openssl s_server` with a fresh self-signed certificate for `localhost`.
final class SelfSignedTLSServer: Sendable {
    let url: String
    let certificatePath: String
    private let directory: URL
    private let process: ChildProcess.Running

    private init(url: String, certificatePath: String, directory: URL, process: ChildProcess.Running) {
        self.url = url
        self.certificatePath = certificatePath
        self.directory = directory
        self.process = process
    }

    /// Makes a certificate, starts the server and waits (at most 2 s) until it accepts connections.
    static func start() async throws -> SelfSignedTLSServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let made = try await ChildProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ],
            deadline: .seconds(30))
        guard made.status == 0 else { throw ServerErrorText("openssl req failed (\(made.status)): \(made.err)") }
        let port = try LoopbackHTTPServer.unusedPort()
        let process = try ChildProcess.start(
            "openssl", ["s_server", "-quiet", "-www", "-accept", "\(port)", "-cert", cert, "-key", key])
        let server = SelfSignedTLSServer(
            url: "https://localhost:\(port)/", certificatePath: cert, directory: directory, process: process)
        for _ in 0..<200 {
            if canConnect(port: port) { return server }
            try await Task.sleep(for: .milliseconds(10))
        }
        server.stop()
        throw ServerErrorText("openssl s_server did not start within 2 s")
    }

    func stop() {
        // SIGKILL: the child may inherit a signal mask that blocks SIGTERM from the test runner's threads.
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }
}

struct ServerErrorText: Error {
    let text: String
    init(_ text: String) { self.text = text }
}
