import AdMediation
import AdNetworkConformance
import AdStorage
import ArgumentParser
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatAds
import Logging
import MediateKit
import Tracing

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Load, then drive the ad's presentation headlessly: impression, optional click, close; print what was sent."
    )

    @OptionGroup var options: ConfigOptions
    @Option(name: .long, help: "The mediated placement.") var placement: String
    @Option(name: .customLong("app-user-id"), help: "The app's user id.") var appUserID: String?
    @Flag(name: .long, help: "Click the ad.") var click = false
    @Option(name: .customLong("watch-seconds"), help: "Simulated seconds on screen before closing.") var watchSeconds:
        Double = 5
    @Flag(name: .long, help: "JSON output.") var json = false

    func validate() throws {
        guard watchSeconds.isFinite, watchSeconds >= 0, watchSeconds <= 3600 else {
            throw ValidationError("--watch-seconds must be 0…3600, got \(watchSeconds)")
        }
    }

    /// `--watch-seconds` as a duration (validated to 0…3600 s).
    private var watch: Duration { OutsideValue.duration(seconds: watchSeconds) ?? .zero }

    func run() async throws {
        let env = try await Environment.load(options, progress: Progress(enabled: false))
        guard let placementConfig = env.configuration.mediation.placements[placement],
            let format = placementConfig.adFormat
        else {
            await env.close()
            throw AdError(.configuration, "--placement: unknown placement \"\(placement)\"")
        }
        let clock = ManualAdClock()
        let outcome = await env.mediator.loadWithTrace(
            AdRequest(placement: placement, format: format, userID: appUserID, testMode: true))
        guard case .success(let result) = outcome.result, let ad = result.ad else {
            await env.close()
            print(
                json
                    ? #"{"placement":"\#(placement)","filled":false,"events":[]}"#
                    : "\(placement): no fill, nothing shown")
            throw ExitCode(1)
        }
        var sent: [[String: Any]] = []
        func report(_ event: AdEvent) async {
            do {
                let first = try await ad.report(event)
                sent.append([
                    "at_s": Double(clock.now.nanoseconds) / 1e9, "event": event.description, "sent": first,
                    "error": NSNull(),
                ])
            } catch {
                sent.append([
                    "at_s": Double(clock.now.nanoseconds) / 1e9, "event": event.description, "sent": false,
                    "error": "\(error)",
                ])
            }
        }
        var reward: [String: Any]? = nil
        var flushed: [String: Any]? = nil
        if let gc = env.networks[ad.networkID] as? GrowthCatNetwork, let gcAd = gc.growthCatAd(for: ad) {
            // GrowthCat: the presentation rules decide the events and when the close button appears.
            var (session, first) = GrowthCatPresentation.present(gcAd, at: clock.now)
            for event in first { await report(Self.adEvent(event)) }
            // The seed validates a reward once the minimum view time is reached, not only at close.
            func validateReward(_ figures: (viewedSeconds: Double, completed: Bool)) async {
                guard let user = appUserID else {
                    reward = ["validated": false, "error": "--app-user-id is required to validate a reward"]
                    return
                }
                do {
                    let answer = try await gc.client.validateAdReward(
                        for: gcAd, appUserID: user, sessionID: nil,
                        viewedSeconds: figures.viewedSeconds, completed: figures.completed)
                    reward = [
                        "validated": answer.rewardValidated, "name": answer.reward?.name ?? NSNull(),
                        "amount": answer.reward?.amount ?? NSNull(), "at_s": Double(clock.now.nanoseconds) / 1e9,
                    ]
                } catch {
                    reward = ["validated": false, "error": "\(error)"]
                }
            }
            let end = AdInstant.zero + watch
            var second = 0.0
            while clock.now < end {
                second += 1
                await clock.advance(to: min(end, .zero + .seconds(Int64(second))))
                if click && second == 1 { for event in session.click() { await report(Self.adEvent(event)) } }
                for event in session.advance(to: clock.now) { await report(Self.adEvent(event)) }
                if let figures = session.rewardValidation(at: clock.now) { await validateReward(figures) }
            }
            switch session.close(at: clock.now) {
            case (.notYet(let availableAt), _):
                sent.append([
                    "at_s": Double(clock.now.nanoseconds) / 1e9, "event": "close refused", "sent": false,
                    "error":
                        "the close button appears at "
                        + "\(availableAt.map { "\(Double($0.nanoseconds) / 1e9) s" } ?? "the end")",
                ])
                if gcAd.isRewarded {
                    reward = ["validated": false, "error": "the ad was not watched long enough to be closed"]
                }
            case (.closed(let validate), let events):
                for event in events { await report(Self.adEvent(event)) }
                if let validate { await validateReward(validate) }
            }
            let report = await gc.client.flushAdEvents()
            flushed = ["sent": report.sent, "dropped": report.dropped, "remaining": report.remaining]
        } else {
            await report(.impression)
            if click {
                await clock.advance(by: watch / 2)
                await report(.click)
            }
            await clock.advance(to: .zero + watch)
            await report(.closed)
        }
        ad.invalidate()
        await env.close()
        let failures = sent.filter { !($0["error"] is NSNull) }.count
        if json {
            let object: [String: Any] = [
                "placement": placement, "filled": true, "network": ad.networkID, "ad_id": ad.creative.id,
                "events": sent, "reward": reward ?? NSNull(), "flush": flushed ?? NSNull(),
            ]
            let data = try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("\(placement): showing \(ad.creative.id) from \(ad.networkID) (\(ad.creative.kind))")
            for event in sent {
                print(
                    String(
                        format: "  t=%5.1fs  %@  %@", event["at_s"] as? Double ?? 0, event["event"] as? String ?? "",
                        (event["error"] as? String) ?? ((event["sent"] as? Bool) == true ? "sent" : "already sent")))
            }
            if let reward {
                print(
                    "  reward: \(reward["validated"] as? Bool == true ? "validated, \(reward["amount"] ?? "") \(reward["name"] ?? "")" : "not granted (\(reward["error"] ?? "the server refused it"))")"
                )
            } else {
                print("  reward: none (not a rewarded ad)")
            }
            if let flushed {
                print("  events flushed: \(flushed["sent"] ?? 0) sent, \(flushed["remaining"] ?? 0) still queued")
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }

    static func adEvent(_ event: GrowthCatPresentation.Event) -> AdEvent {
        switch event.name {
        case .impression: .impression
        case .click: .click
        case .videoStart: .videoStart
        case .videoProgress:
            .videoProgress(percent: OutsideValue.integer(event.metadata["progress_pct"] ?? "", in: 0...100) ?? 0)
        case .videoComplete: .videoComplete
        case .adClosed: .closed
        case .adReported: .reported(reason: event.metadata["reason"] ?? "")
        }
    }
}
