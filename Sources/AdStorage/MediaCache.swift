import Crypto
import Foundation

/// Creative files on disk. File names come from a SHA-256 of the URL (never from anything the server names), each
/// file has its own expiry, and writes are atomic (a reader never sees half a file).
public final class MediaCache: Sendable {
    /// The cache directory.
    public let directory: URL

    /// Uses (and creates) `directory`.
    public init(directory: URL) throws(StorageError) {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StorageError("media", error)
        }
    }

    /// The file name for `url`: hex SHA-256 of the URL string.
    public static func fileName(for url: String) -> String {
        SHA256.hash(data: Data(url.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    private func dataFile(_ url: String) -> URL { directory.appendingPathComponent(Self.fileName(for: url) + ".asset") }
    private func expiryFile(_ url: String) -> URL { directory.appendingPathComponent(Self.fileName(for: url) + ".expires") }

    /// Stores `data` for `url`, valid until `expiresAt` (Unix seconds).
    public func store(_ data: Data, for url: String, expiresAt: Int64) throws(StorageError) {
        do {
            try data.write(to: dataFile(url), options: .atomic)
            try Data(String(expiresAt).utf8).write(to: expiryFile(url), options: .atomic)
        } catch {
            throw StorageError("media", error)
        }
    }

    /// The local file for `url` if it is cached and unexpired at `now` (Unix seconds); an expired file is removed.
    public func file(for url: String, now: Int64) -> URL? {
        let data = dataFile(url)
        guard let text = try? String(contentsOf: expiryFile(url), encoding: .utf8), let expiry = Int64(text),
              FileManager.default.fileExists(atPath: data.path) else { return nil }
        if expiry <= now {
            try? FileManager.default.removeItem(at: data)
            try? FileManager.default.removeItem(at: expiryFile(url))
            return nil
        }
        return data
    }
}
