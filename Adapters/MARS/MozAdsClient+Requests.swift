import AdMediation
import AdapterKit
import Foundation

/// How MARS's requests are sent: the ads request, the OHTTP preflight and the callbacks each go through AdapterKit's
/// ``RequestRunner`` (the HTTP cache stays in front of the ads request: a hit sends nothing). The runner puts the
/// deadline on the request (the ``HTTPClient`` enforces it), sends nothing from a cancelled task and maps a transport
/// failure once, to the seed's error (`Request failed (<code>): …`, reason `mars.transport_<code>`); the status
/// mapping stays MARS's own (`statusError`: 200 only, 400, 5xx, anything else unexpected), read after the cache
/// step as specs/mars.md §4 orders it.
extension MozAdsClient {
    /// A runner sending through `channel` (direct or the OHTTP relay); `context` prefixes a transport failure's
    /// message (`OHTTP preflight failed: `).
    static func runner(_ channel: any HTTPClient, context: String = "") -> RequestRunner {
        RequestRunner(http: channel) { AdError.mars(code: .transport($0.code), message: context + $0.message) }
    }
}
