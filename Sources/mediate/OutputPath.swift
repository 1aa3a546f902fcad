import Foundation

/// An output file named on the command line (`--output`), checked before any work so a bad path fails at once
/// instead of after the run (issue 33 item 4).
enum OutputPath {
    /// Why `path` cannot be written (as `option: …`, naming the path), or nil when it can: its directory must exist
    /// and be writable, and the path itself must not be a directory nor an existing file that cannot be written.
    /// Nothing is created.
    static func problem(_ path: String, option: String) -> String? {
        let shown = TerminalText.escaped(path)
        guard !path.isEmpty else { return "\(option): an empty path" }
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        // Never through a symbolic link, FIFO, socket or device: the report is written by rename, which would replace
        // it with a regular file (as root, `/dev/full` was replaced).
        var status = stat()
        if lstat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG, status.st_mode & S_IFMT != S_IFDIR {
            return "\(option): \(shown) is not a regular file (a link, FIFO, socket or device); give a file path"
        }
        if files.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { return "\(option): \(shown) is a directory, not a file" }
            return files.isWritableFile(atPath: path) ? nil : "\(option): \(shown) is not writable"
        }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        guard files.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            return "\(option): cannot write \(shown): the directory \(TerminalText.escaped(directory)) does not exist"
        }
        guard isDirectory.boolValue else {
            return "\(option): cannot write \(shown): \(TerminalText.escaped(directory)) is not a directory"
        }
        guard files.isWritableFile(atPath: directory) else {
            return "\(option): cannot write \(shown): the directory \(TerminalText.escaped(directory)) is not writable"
        }
        return nil
    }
}
