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
    static func otlp(_ spans: [FinishedInMemorySpan], serviceName: String = "mediate") -> OTLPExport {
        let encoded = spans.map { span in
            var otlp = OTLPExport.Span(
                traceID: span.traceID, spanID: span.spanID, parentSpanID: span.parentSpanID, name: span.operationName,
                kind: kind(span.kind), start: "\(span.startInstant.nanosecondsSinceEpoch)",
                end: "\(span.endInstant.nanosecondsSinceEpoch)", attributes: attributes(span.attributes))
            if !span.errors.isEmpty || span.status?.code == .error {
                otlp.status = OTLPExport.Status(
                    code: 2, message: span.status?.message ?? span.errors.first.map { "\($0.error)" } ?? "")
            }
            if !span.errors.isEmpty {
                otlp.events = span.errors.map { recorded in
                    OTLPExport.Event(
                        name: "exception", time: "\(recorded.instant.nanosecondsSinceEpoch)",
                        attributes: [.init(key: "exception.message", value: .string("\(recorded.error)"))])
                }
            }
            return otlp
        }
        let service = OTLPExport.KeyValue(key: "service.name", value: .string(serviceName))
        return OTLPExport(
            resourceSpans: [
                OTLPExport.ResourceSpans(
                    resource: OTLPExport.Resource(attributes: [service]),
                    scopeSpans: [OTLPExport.ScopeSpans(scope: OTLPExport.Scope(name: "admediation"), spans: encoded)])
            ])
    }

    static func write(_ spans: [FinishedInMemorySpan], to path: String) throws {
        guard let data = ReportJSON.data(otlp(spans), compact: true),
            FileManager.default.createFile(atPath: path, contents: data + Data("\n".utf8))
        else {
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

    private static func attributes(_ attributes: SpanAttributes) -> [OTLPExport.KeyValue] {
        var list: [OTLPExport.KeyValue] = []
        attributes.forEach { key, attribute in
            let value: OTLPExport.Value =
                switch attribute.toSpanAttribute() {
                case .string(let text): .string(text)
                case .int64(let number): .int("\(number)")
                case .int32(let number): .int("\(number)")
                case .double(let number): .double(number)
                case .bool(let flag): .bool(flag)
                default: .string("\(attribute)")
                }
            list.append(OTLPExport.KeyValue(key: key, value: value))
        }
        return list.sorted { $0.key < $1.key }
    }
}
