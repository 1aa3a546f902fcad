import AdMediation
import AdTransport
import Foundation

/// JSON on the wire, written once for adapters: request bodies from `Encodable` values, answers decoded into
/// `Decodable` values after the size and depth bounds of ``JSONLimits`` (outside input is checked before any decoder
/// sees it), every failure an ``AdError`` with code ``AdError/Code/invalidResponse`` naming the body.
public enum WireCodec {
    /// A request carrying `body` as JSON (`Content-Type: application/json`), `POST` by default.
    ///
    /// - Throws: ``AdError`` with code ``AdError/Code/configuration`` when `body` cannot be encoded (a non-finite
    ///   number, say): the request is the adapter's own, so this is its bug, not the server's.
    public static func request<Body: Encodable>(
        _ method: HTTPMethod = .post, url: String, body: Body, headers: HTTPHeaders = [:]
    ) throws(AdError) -> HTTPRequest {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            data = try encoder.encode(body)
        } catch {
            throw AdError(.configuration, "the request body for \(url) could not be encoded: \(error)")
        }
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        return HTTPRequest(method: method, url: url, headers: headers, body: data)
    }

    /// Decodes `T` from `body` after `limits`; `what` names the body in errors (`"the bid response"`).
    public static func decode<T: Decodable>(
        _ type: T.Type, from body: Data, limits: JSONLimits = JSONLimits(), what: String
    ) throws(AdError) -> T {
        if let violation = limits.violation(in: body) { throw AdError(.invalidResponse, "\(what): \(violation)") }
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch let error as AdError {
            throw error
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            throw AdError(.invalidResponse, "\(what) is not a JSON object")
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw AdError(.invalidResponse, "\(what) is not a JSON object")
        } catch {
            throw AdError(.invalidResponse, "\(what): \(error)")
        }
    }
}
