import Foundation
import TestSupport
import Testing

/// Issue 47 item 2: on a terminal, live progress never wraps (each redraw fits the width, so `\r` redraws it whole
/// instead of leaving debris) and says the whole run's ETA; the Ctrl-C notice is plain text.
@Suite("mediate compare: progress on a terminal", .serialized, .timeLimit(.minutes(2)))
struct ProgressWidthTests {
    /// `mediate` under a pseudo-terminal (`script`), with `COLUMNS` set: stdout and stderr together, as a user sees.
    static func onATerminal(_ arguments: [String], columns: Int) async throws -> ChildResult {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("mediate").path
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "\(columns)"
        environment["XDG_STATE_HOME"] =
            FileManager.default.temporaryDirectory.appendingPathComponent("mediate-state-\(UUID().uuidString)").path
        let command = ([binary] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try await ChildProcess.run(
            "script", ["-qec", command, "/dev/null"], environment: environment, deadline: .seconds(90))
    }

    /// The progress lines as drawn: the text between carriage returns and newlines, without the clear-line code.
    static func drawn(_ output: String) -> [String] {
        // The terminal writes a newline as "\r\n", one Character in Swift: split on the scalars' lines instead.
        output.replacingOccurrences(of: "\u{1B}[K", with: "").replacingOccurrences(of: "\r\n", with: "\n")
            .split(whereSeparator: { $0 == "\r" || $0 == "\n" })
            .map(String.init).filter { $0.contains("phase ") }
    }

    @Test func everyLiveProgressLineFitsTheTerminalWidth() async throws {
        let run = try await Self.onATerminal(["compare", "--requests", "40", "--placement", "home_tile"], columns: 40)
        #expect(run.status == 0, "\(run.out)")
        let lines = Self.drawn(run.out)
        #expect(!lines.isEmpty, "progress was drawn: \(run.out)")
        for line in lines { #expect(line.count <= 39, "wider than 40 columns less one: \(line)") }
    }

    @Test func theCtrlCNoticeIsPlainText() async throws {
        let run = try await CLIUsabilityTests.interruptedCompare([])
        #expect(run.err.contains("interrupted: finishing the requests in flight"), "\(run.err)")
        #expect(!run.err.contains("\\u{0A}"), "no escaped newline: \(run.err)")
    }
}
