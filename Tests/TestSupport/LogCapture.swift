import AdMediation
import Logging

/// Every log record a logger produced, for assertions. The logger is injected, so no global bootstrap is needed and
/// parallel tests do not see each other's records.
public final class LogCapture: Sendable {
    /// One record.
    public struct Record: Sendable {
        /// Its level.
        public var level: Logger.Level
        /// Its message.
        public var message: String
        /// Its metadata, values as text.
        public var metadata: [String: String]
    }

    private let records = LockedValue<[Record]>([])

    /// An empty capture.
    public init() {}

    /// A logger that records into this capture, at `level` and above.
    public func logger(label: String, level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    /// Every record so far, in order.
    public var all: [Record] { records.withLock { $0 } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let record = Record(
                level: event.level, message: "\(event.message)", metadata: (event.metadata ?? [:]).mapValues { "\($0)" }
            )
            capture.records.withLock { $0.append(record) }
        }
    }
}
