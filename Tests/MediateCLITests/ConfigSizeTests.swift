import Foundation
import TestSupport
import Testing

/// `--config` never reads more than its 1 MiB limit (issue 31 item 8): a 1 GiB file is refused after 1 MiB + 1 byte.
@Suite("Configuration file size", .timeLimit(.minutes(1)))
struct ConfigSizeTests {
    /// The run is limited to 500 MB of address space (`ulimit -v`): reading the whole gigabyte fails there ("cannot
    /// read"), while a run that stops at the limit names the limit. A sparse file: no disk is used.
    @Test func aOneGigabyteConfigIsRefusedWithoutReadingItIntoMemory() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("huge-\(UUID().uuidString).json").path
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            Issue.record("cannot create \(path)")
            return
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("mediate").path
        let result = try await ChildProcess.run(
            "/bin/sh", ["-c", "ulimit -v 500000 && exec \"$0\" load --config \"$1\" --placement launch", binary, path],
            deadline: .seconds(30))
        #expect(!result.timedOut)
        #expect(result.status == 2, "\(result.err)")
        #expect(
            result.err.contains("--config: \(path) is larger than the limit of 1048576 bytes"), "stderr: \(result.err)")
    }
}
