import Foundation

/// An OTLP/JSON `ExportTraceServiceRequest` (`mediate load --trace-file`), as the OpenTelemetry protocol names its
/// fields: ids in hex, times in nanoseconds since the epoch as strings, kinds and status codes as numbers.
struct OTLPExport: Encodable, Sendable {
    var resourceSpans: [ResourceSpans]

    enum CodingKeys: String, CodingKey {
        case resourceSpans
    }

    /// The spans of one resource (this process).
    struct ResourceSpans: Encodable, Sendable {
        var resource: Resource
        var scopeSpans: [ScopeSpans]

        enum CodingKeys: String, CodingKey {
            case resource, scopeSpans
        }
    }

    /// The resource's attributes (`service.name`).
    struct Resource: Encodable, Sendable {
        var attributes: [KeyValue]

        enum CodingKeys: String, CodingKey {
            case attributes
        }
    }

    /// The spans of one instrumentation scope.
    struct ScopeSpans: Encodable, Sendable {
        var scope: Scope
        var spans: [Span]

        enum CodingKeys: String, CodingKey {
            case scope, spans
        }
    }

    /// An instrumentation scope.
    struct Scope: Encodable, Sendable {
        var name: String

        enum CodingKeys: String, CodingKey {
            case name
        }
    }

    /// One span; `parentSpanId`, `status` and `events` only when it has them.
    struct Span: Encodable, Sendable {
        var traceID: String
        var spanID: String
        var parentSpanID: String?
        var name: String
        var kind: Int
        var start: String
        var end: String
        var attributes: [KeyValue]
        var status: Status? = nil
        var events: [Event]? = nil

        enum CodingKeys: String, CodingKey {
            case name, kind, attributes, status, events
            case traceID = "traceId"
            case spanID = "spanId"
            case parentSpanID = "parentSpanId"
            case start = "startTimeUnixNano"
            case end = "endTimeUnixNano"
        }
    }

    /// A span's status (`2`: error).
    struct Status: Encodable, Sendable {
        var code: Int
        var message: String

        enum CodingKeys: String, CodingKey {
            case code, message
        }
    }

    /// A span's event (an exception).
    struct Event: Encodable, Sendable {
        var name: String
        var time: String
        var attributes: [KeyValue]

        enum CodingKeys: String, CodingKey {
            case name, attributes
            case time = "timeUnixNano"
        }
    }

    /// An attribute.
    struct KeyValue: Encodable, Sendable {
        var key: String
        var value: Value

        enum CodingKeys: String, CodingKey {
            case key, value
        }
    }

    /// An attribute's value: `{"stringValue"}`, `{"intValue"}` (a string), `{"doubleValue"}` or `{"boolValue"}`.
    enum Value: Encodable, Sendable {
        case string(String)
        case int(String)
        case double(Double)
        case bool(Bool)

        enum CodingKeys: String, CodingKey {
            case stringValue, intValue, doubleValue, boolValue
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .string(let text): try container.encode(text, forKey: .stringValue)
            case .int(let text): try container.encode(text, forKey: .intValue)
            case .double(let number): try container.encode(number, forKey: .doubleValue)
            case .bool(let flag): try container.encode(flag, forKey: .boolValue)
            }
        }
    }
}
