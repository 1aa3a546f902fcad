import AdMediation
import Foundation
import InMemoryTracing
import Tracing

/// `mediate load --trace-file`: the request's spans (mediation, each ad line, each HTTP request) kept in memory and
/// written as one OTLP/JSON `ExportTraceServiceRequest` — the format of the OpenTelemetry Collector's `otlpjsonfile`
/// receiver and of `POST /v1/traces` with `Content-Type: application/json`.
enum TraceFile {
    /// A tracer with OpenTelemetry-shaped ids (16 random bytes for a trace, 8 for a span, in hex).
    static func tracer() -> InMemoryTracer {
        InMemoryTracer(idGenerator: .init(nextTraceID: { randomHex(bytes: 16) }, nextSpanID: { randomHex(bytes: 8) }))
    }

    static func randomHex(bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// The spans as OTLP/JSON (ids in hex, times in nanoseconds since the epoch as strings, kinds and status codes as
    /// the protocol's numbers).
    static func otlpJSON(_ spans: [FinishedInMemorySpan], serviceName: String = "mediate") -> [String: Any] {
        let encoded = spans.map { span -> [String: Any] in
            var object: [String: Any] = [
                "traceId": span.traceID, "spanId": span.spanID, "name": span.operationName, "kind": kind(span.kind),
                "startTimeUnixNano": "\(span.startInstant.nanosecondsSinceEpoch)",
                "endTimeUnixNano": "\(span.endInstant.nanosecondsSinceEpoch)",
                "attributes": attributes(span.attributes),
            ]
            if let parent = span.parentSpanID { object["parentSpanId"] = parent }
            if !span.errors.isEmpty || span.status?.code == .error {
                object["status"] = [
                    "code": 2, "message": span.status?.message ?? span.errors.first.map { "\($0.error)" } ?? "",
                ]
            }
            if !span.errors.isEmpty {
                object["events"] = span.errors.map { recorded -> [String: Any] in
                    [
                        "name": "exception", "timeUnixNano": "\(recorded.instant.nanosecondsSinceEpoch)",
                        "attributes": [["key": "exception.message", "value": ["stringValue": "\(recorded.error)"]]],
                    ]
                }
            }
            return object
        }
        return [
            "resourceSpans": [
                [
                    "resource": ["attributes": [["key": "service.name", "value": ["stringValue": serviceName]]]],
                    "scopeSpans": [["scope": ["name": "admediation"], "spans": encoded]],
                ]
            ]
        ]
    }

    static func write(_ spans: [FinishedInMemorySpan], to path: String) throws {
        let data = try JSONSerialization.data(
            withJSONObject: otlpJSON(spans), options: [.sortedKeys, .withoutEscapingSlashes])
        guard FileManager.default.createFile(atPath: path, contents: data + Data("\n".utf8)) else {
            throw AdError(.configuration, "--trace-file: cannot write \(path)")
        }
    }

    private static func kind(_ kind: SpanKind) -> Int {
        switch kind {
        case .internal: 1
        case .server: 2
        case .client: 3
        case .producer: 4
        case .consumer: 5
        }
    }

    private static func attributes(_ attributes: SpanAttributes) -> [[String: Any]] {
        var list: [[String: Any]] = []
        attributes.forEach { key, attribute in
            let value: [String: Any] =
                switch attribute.toSpanAttribute() {
                case .string(let text): ["stringValue": text]
                case .int64(let number): ["intValue": "\(number)"]
                case .int32(let number): ["intValue": "\(number)"]
                case .double(let number): ["doubleValue": number]
                case .bool(let flag): ["boolValue": flag]
                default: ["stringValue": "\(attribute)"]
                }
            list.append(["key": key, "value": value])
        }
        return list.sorted { ($0["key"] as? String ?? "") < ($1["key"] as? String ?? "") }
    }
}
