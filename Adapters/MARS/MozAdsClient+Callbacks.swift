import AdMediation
import AdStorage
import AdTransport
import Crypto
import Foundation
import ObliviousHTTP

/// Impression, click and report callbacks.
extension MozAdsClient {
    // MARK: Callbacks

    /// Fires an impression callback, without its `cap_key`. Success is status 200 only.
    public func recordImpression(_ impressionURL: String, options: MozAdsCallbackOptions? = nil)
        async throws(AdError)
    {
        try await callback(label: "record_impression", url: impressionURL, options: options) {
            Self.removingQueryItem("cap_key", from: $0)
        }
    }

    /// Fires a click callback exactly as given.
    public func recordClick(_ clickURL: String, options: MozAdsCallbackOptions? = nil) async throws(AdError) {
        try await callback(label: "record_click", url: clickURL, options: options) { $0 }
    }

    /// Reports an ad with a reason (`&reason=<wire value>`).
    public func reportAd(_ reportURL: String, reason: MozAdsReportReason, options: MozAdsCallbackOptions? = nil)
        async throws(AdError)
    {
        try await callback(label: "report_ad", url: reportURL, options: options) {
            Self.appendQuery($0, [("reason", reason.rawValue)])
        }
    }

    /// Records an impression using the callback URL (typically `ad.callbacks.impression`). The seed's spelling of
    /// ``recordImpression(_:options:)``.
    public func recordImpression(impressionUrl: String, options: MozAdsCallbackOptions? = nil) async throws(AdError) {
        try await recordImpression(impressionUrl, options: options)
    }

    /// Records a click using the callback URL (typically `ad.callbacks.click`). The seed's spelling of
    /// ``recordClick(_:options:)``.
    public func recordClick(clickUrl: String, options: MozAdsCallbackOptions? = nil) async throws(AdError) {
        try await recordClick(clickUrl, options: options)
    }

    /// Reports an ad using the callback URL (typically `ad.callbacks.report`). The seed's spelling of
    /// ``reportAd(_:reason:options:)``.
    public func reportAd(reportUrl: String, reason: MozAdsReportReason, options: MozAdsCallbackOptions? = nil)
        async throws(AdError)
    {
        try await reportAd(reportUrl, reason: reason, options: options)
    }

    func callback(label: String, url: String, options: MozAdsCallbackOptions?, rewrite: (String) -> String)
        async throws(AdError)
    {
        guard Self.isAbsoluteURL(url) else {
            // Caught at the API edge: not reported to telemetry, nothing sent.
            throw AdError.mars(code: .invalidCallbackURL, message: url)
        }
        do throws(DestinationRefusal) {
            try destinations.check(url, as: .callback)
        } catch {
            // Refused by the destination policy: nothing sent; the message names the host and the reason only.
            DestinationPolicy.record(error, kind: .callback, network: "mars")
            throw AdError.mars(code: .invalidCallbackURL, message: error.description)
        }
        do {
            let response: HTTPResponse
            do {
                var headers = HTTPHeaders()
                let budget = Duration.seconds(60)
                let started = ContinuousClock.now
                let channel = try await channel(ohttp: options?.ohttp == true, headers: &headers, budget: budget)
                response = try await Self.runner(channel).response(
                    to: HTTPRequest(url: rewrite(url), headers: headers).requiring(destinations, as: .callback),
                    deadline: try Self.left(of: budget, since: started))
            } catch let error as AdError {
                throw error
            } catch {
                throw AdError.mars(code: .transport(.other), message: "\(error)")
            }
            if let error = Self.statusError(response) { throw error }
            telemetry.recordClientOperationTotal(label: label)
        } catch let error as AdError {
            telemetry.recordClientError(label: label, value: error.description)
            throw error
        } catch {
            throw AdError.mars(code: .transport(.other), message: "\(error)")
        }
    }

    /// The policy callback, landing-page and image URLs must pass: https to public hosts, or also http and loopback
    /// when the environment's base URL is loopback (``MozAdsEnvironment/test``, a local sandbox); the environment's
    /// own origin is trusted.
    nonisolated var destinations: DestinationPolicy { .forNetwork(baseURL: environment.baseURL) }

    static func removingQueryItem(_ name: String, from url: String) -> String {
        guard var components = URLComponents(string: url), let items = components.queryItems else { return url }
        let kept = items.filter { $0.name != name }
        components.queryItems = kept.isEmpty ? nil : kept
        return components.string ?? url
    }
}
