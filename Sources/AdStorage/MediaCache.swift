import AdMediation
import Crypto
import Foundation

/// Creative files on disk. File names come from a SHA-256 of the URL (never from anything the server names), each
/// file has its own expiry, writes are atomic (a reader never sees half a file), and the whole cache is bounded:
/// past `maxBytes` the least recently used creatives go (a hit counts as a use), and expired files are swept (at
/// most once a minute of the caller's clock, so a burst of stores does not rescan the directory each time).
public final class MediaCache: Sendable {
    /// The cache directory.
    public let directory: URL
    /// The most bytes of creatives kept (default 50 MiB).
    public let maxBytes: Int

    /// Uses (and creates) `directory`, holding at most `maxBytes` of creatives (at least 1 MiB).
    public init(directory: URL, maxBytes: Int = 50 << 20) throws(StorageError) {
        self.directory = directory
        self.maxBytes = max(1 << 20, maxBytes)
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

    /// What the cache knows without reading the directory: the bytes on disk after its last scan plus what it stored
    /// since (nil: not scanned yet), and when it last swept.
    private let tally = LockedValue<(bytes: Int?, lastSweep: Int64?)>((nil, nil))

    /// How often (in the caller's seconds) ``store(_:for:expiresAt:now:)`` sweeps expired files.
    static let sweepInterval: Int64 = 60

    private func onIO<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in io.async { continuation.resume(returning: body()) } }
    }

    /// Stores `data` for `url`, valid until `expiresAt` (Unix seconds), then sweeps files expired at `expiresAt`'s
    /// writing time `now` when given (so the directory never keeps what can no longer be served), then evicts the
    /// least recently used creatives while the cache holds more than `maxBytes`. A creative larger than `maxBytes`
    /// is refused (it is served from its remote URL).
    public func store(_ data: Data, for url: String, expiresAt: Int64, now: Int64? = nil) async throws(StorageError) {
        guard data.count <= maxBytes else {
            throw StorageError(
                "media", message: "the creative (\(data.count) bytes) is larger than the cache (\(maxBytes))")
        }
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
        if let now {
            let due = tally.withLock { t -> Bool in
                guard t.lastSweep.map({ now < $0 || now - $0 >= Self.sweepInterval }) ?? true else { return false }
                t.lastSweep = now
                return true
            }
            if due { _ = await sweepExpired(now: now) }
        }
        // The directory is read again only when the running total may be past the cap (or was never read): a
        // replaced file counts twice until then, which errs towards scanning, never towards keeping too much.
        let mayBeOver = tally.withLock { t -> Bool in
            guard let bytes = t.bytes else { return true }
            t.bytes = bytes + data.count
            return bytes + data.count > maxBytes
        }
        if mayBeOver { _ = await evictLeastRecentlyUsed(keeping: dataFile) }
    }

    /// Removes the least recently used creatives (by modification time, which a hit refreshes) until the cache holds
    /// at most `maxBytes`, never `keeping` (the one just stored); returns how many went.
    @discardableResult
    func evictLeastRecentlyUsed(keeping: URL? = nil) async -> Int {
        let directory = directory, maxBytes = maxBytes
        let result: (removed: Int, total: Int) = await onIO {
            let files = FileManager.default
            let names = (try? files.contentsOfDirectory(atPath: directory.path)) ?? []
            var entries: [(url: URL, size: Int, used: Date)] = []
            var total = 0
            for name in names where name.hasSuffix(".asset") {
                let url = directory.appendingPathComponent(name)
                let attributes = try? files.attributesOfItem(atPath: url.path)
                let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
                let used = (attributes?[.modificationDate] as? Date) ?? .distantPast
                entries.append((url, size, used))
                total += size
            }
            guard total > maxBytes else { return (0, total) }
            var removed = 0
            for entry in entries.sorted(by: { $0.used < $1.used }) where total > maxBytes {
                if entry.url.path == keeping?.path { continue }
                try? files.removeItem(at: entry.url)
                let base = entry.url.deletingPathExtension().lastPathComponent
                try? files.removeItem(at: directory.appendingPathComponent(base + ".expires"))
                total -= entry.size
                removed += 1
            }
            return (removed, total)
        }
        tally.withLock { $0.bytes = result.total }
        return result.removed
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
            // A hit is a use: the least recently used creatives are the ones evicted.
            try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: data.path)
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
