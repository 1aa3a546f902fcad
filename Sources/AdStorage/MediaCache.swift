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
    private func expiryFile(_ url: String) -> URL {
        directory.appendingPathComponent(Self.fileName(for: url) + ".expires")
    }

    /// File I/O runs here, never on the cooperative pool (a slow disk suspends the caller, it does not hold a thread).
    private let io = DispatchQueue(label: "admediation.media-cache")

    private func onIO<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in io.async { continuation.resume(returning: body()) } }
    }

    /// Stores `data` for `url`, valid until `expiresAt` (Unix seconds), then sweeps files expired at `expiresAt`'s
    /// writing time `now` when given (so the directory never keeps what can no longer be served).
    public func store(_ data: Data, for url: String, expiresAt: Int64, now: Int64? = nil) async throws(StorageError) {
        let dataFile = dataFile(url), expiryFile = expiryFile(url)
        let failure: StorageError? = await onIO {
            do {
                try data.write(to: dataFile, options: .atomic)
                try Data(String(expiresAt).utf8).write(to: expiryFile, options: .atomic)
                return nil
            } catch {
                return StorageError("media", error)
            }
        }
        if let failure { throw failure }
        if let now { _ = await sweepExpired(now: now) }
    }

    /// The local file for `url` if it is cached and unexpired at `now` (Unix seconds); an expired file is removed.
    public func file(for url: String, now: Int64) async -> URL? {
        let data = dataFile(url), expiry = expiryFile(url)
        return await onIO {
            guard let text = try? String(contentsOf: expiry, encoding: .utf8), let expiresAt = Int64(text),
                FileManager.default.fileExists(atPath: data.path)
            else { return nil }
            if expiresAt <= now {
                try? FileManager.default.removeItem(at: data)
                try? FileManager.default.removeItem(at: expiry)
                return nil
            }
            return data
        }
    }

    /// Removes every creative expired at `now` (and any file whose expiry cannot be read); returns how many went.
    @discardableResult
    public func sweepExpired(now: Int64) async -> Int {
        let directory = directory
        return await onIO {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            var removed = 0
            for name in names where name.hasSuffix(".expires") {
                let base = String(name.dropLast(".expires".count))
                let expiry = directory.appendingPathComponent(name)
                let text = try? String(contentsOf: expiry, encoding: .utf8)
                guard (text.flatMap { Int64($0) }).map({ $0 <= now }) ?? true else { continue }
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(base + ".asset"))
                try? FileManager.default.removeItem(at: expiry)
                removed += 1
            }
            return removed
        }
    }

    /// The number of creatives on disk.
    public func count() async -> Int {
        let directory = directory
        return await onIO {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter {
                $0.hasSuffix(".asset")
            }.count
        }
    }
}
