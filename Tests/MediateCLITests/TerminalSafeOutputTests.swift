import AdMediation
import AdMediationTesting
import Foundation
import Testing

/// Terminal-safe output (issue 31, item 6): text from a server reaches the human output of `mediate load` and
/// `mediate show` with its control characters escaped, so it cannot retitle or clear the terminal or forge lines.
@Suite("mediate: terminal-safe output", .serialized, .timeLimit(.minutes(2)))
struct TerminalSafeOutputTests {
    static let hostile = "evil\u{1B}]0;pwned\u{07}\n[forged trace line]\u{9B}2J"

    /// A loopback app-open server whose ad id and headline are `hostile`; tracking URLs answer 200.
    static func server(adID: String = hostile) throws -> LoopbackHTTPServer {
        let box = ServerURL()
        let server = try LoopbackHTTPServer { request in
            guard request.path == "/appopen/v1/ad" else { return .respond(.text("")) }
            let base = box.value
            let object: [String: Any] = [
                "ad_id": adID, "creative": ["type": "image", "url": "\(base)/img.png", "headline": adID],
                "tracking": ["impression": "\(base)/imp", "click": "\(base)/click"], "ecpm": 1.0,
            ]
            let body = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
            return .respond(.init(headers: [("Content-Type", "application/json")], body: Array(body)))
        }
        box.set(server.baseURL)
        return server
    }

    static func config(_ server: LoopbackHTTPServer) throws -> String {
        try writeConfig(
            """
            {"networks": {"ao": {"type": "appopen", "base_url": "\(server.baseURL)"}},
             "placements": {"launch": {"format": "app_open", "lines": [{"network": "ao", "placement": \
            "ca-app-pub-3940256099942544/5575463023", "timeout_ms": 2000}]}}}
            """)
    }

    /// No control character (C0 but newline, DEL, C1) in `text`, and no line of it starts like the forged one.
    static func expectTerminalSafe(_ text: String) {
        let bad = text.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value)
        }
        #expect(bad.isEmpty, "control characters reached the terminal: \(bad.map { $0.value })")
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("[forged trace line]") })
        #expect(text.contains(#"\u{1B}]0;pwned\u{07}\u{0A}[forged trace line]\u{9B}"#), "shown escaped: \(text)")
    }

    @Test func loadEscapesControlCharactersOfAServersAdID() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let run = try await mediate(["load", "--config", try Self.config(server), "--placement", "launch"])
        #expect(run.code == 0, "\(run.err)")
        Self.expectTerminalSafe(run.out)
    }

    /// Issue 45: a right-to-left override (U+202E) passed the terminal escaping in `load` and `show`, so an ad id
    /// could display reversed ("Trojan Source", CVE-2021-42574). Every bidirectional control is escaped.
    @Test(arguments: ["load", "show"])
    func bidirectionalControlsOfAServersAdIDAreEscaped(command: String) async throws {
        let server = try Self.server(adID: "ad\u{202E}gnp.exe\u{2066}x\u{200F}")
        defer { server.stop() }
        let run = try await mediate([command, "--config", try Self.config(server), "--placement", "launch"])
        let bidi = Set<UInt32>([0x061C, 0x200E, 0x200F]).union(UInt32(0x202A)...0x202E).union(UInt32(0x2066)...0x2069)
        #expect(!run.out.unicodeScalars.contains { bidi.contains($0.value) }, "\(run.out)")
        #expect(run.out.contains(#"ad\u{202E}gnp.exe\u{2066}x\u{200F}"#), "shown escaped: \(run.out)")
    }

    @Test func showEscapesControlCharactersOfAServersAdID() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let run = try await mediate(["show", "--config", try Self.config(server), "--placement", "launch"])
        Self.expectTerminalSafe(run.out)
    }
}

/// The server's own base URL, known only once it listens.
final class ServerURL: Sendable {
    private let url = LockedValue("")
    var value: String { url.withLock { $0 } }
    func set(_ value: String) { url.withLock { $0 = value } }
}
