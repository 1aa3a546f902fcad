import AdMediation
import AdMediationTesting
import AdTransport
import ArgumentParser
import Foundation
import MediateKit

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Load, then drive the ad's presentation headlessly (render, playback, optional click, close); "
            + "print what was queued, delivered or not sent.",
        discussion: """
            Examples:
              mediate show --placement rewarded_coins --app-user-id u1 --watch-seconds 30
              mediate show --config my.json --placement level_end --click --json
              mediate show --placement rewarded_coins --app-user-id u1 --gdpr 1 --tcf CPXxRfAPXxRfAAfKABENB
            """
    )

    @OptionGroup var options: ConfigOptions
    @OptionGroup var demoOptions: DemoOptions
    @OptionGroup(title: "Privacy signals (sent with the request)") var privacy: PrivacyOptions
    @Option(name: .long, help: "The mediated placement.") var placement: String
    @Option(name: .customLong("app-user-id"), help: "The app's user id.") var appUserID: String?
    @Option(
        name: .customLong("advertising-id"),
        help: "The device's advertising id (IDFA, GAID): sent where a network carries it and the privacy rules allow.")
    var advertisingID: String?
    @Flag(name: .long, help: "Click the ad.") var click = false
    // `.unconditional`: `--watch-seconds -1` reads -1 and is refused with its range, not "Missing value".
    @Option(
        name: .customLong("watch-seconds"), parsing: .unconditional, help: "Simulated seconds on screen before closing."
    )
    var watchSeconds: Double = 5
    @Option(
        name: .customLong("fail-playback-after"),
        help: "Simulated seconds of playback after which a video fails (default: it plays to its end).")
    var failPlaybackAfter: Double?
    @Flag(name: .long, help: "JSON output.") var json = false

    func validate() throws {
        guard watchSeconds.isFinite, watchSeconds >= 0, watchSeconds <= 3600 else {
            throw ValidationError("--watch-seconds must be 0…3600, got \(watchSeconds)")
        }
        if let failPlaybackAfter, !(failPlaybackAfter.isFinite && failPlaybackAfter >= 0 && failPlaybackAfter <= 3600) {
            throw ValidationError("--fail-playback-after must be 0…3600, got \(failPlaybackAfter)")
        }
    }

    /// `--watch-seconds` as a duration (validated to 0…3600 s).
    private var watch: Duration { OutsideValue.duration(seconds: watchSeconds) ?? .zero }

    func run() async throws {
        let presented = try await Environment.with(options, demo: demoOptions, progress: Progress(enabled: false)) {
            env -> Presented in
            guard let placementConfig = env.configuration.mediation.placements[placement] else {
                throw AdError(.configuration, "--placement: unknown placement \"\(placement)\"")
            }
            let clock = ManualAdClock()
            var request = AdRequest(
                placement: placement, format: placementConfig.format, userID: appUserID, privacy: privacy.signals,
                testMode: true)
            request.advertisingID = advertisingID
            let outcome = await env.mediator.loadWithTrace(request)
            guard case .success(let result) = outcome.result, let ad = result.ad else {
                // Why nothing was shown, when the privacy rules blocked lines: the mediated path's reasons.
                let blocked = outcome.trace.lines.compactMap { line in
                    line.privacyReason.map { "\(line.network)/\(line.placement): privacy_blocked: \($0)" }
                }
                return .nothing(blocked: blocked)
            }
            // Core types only: the adapter's own rules decide the events, the close button and the reward.
            let shown = try await ad.presentFullScreen(
                on: SimulatedViewer(
                    clock: clock, watch: watch, click: click,
                    failAt: failPlaybackAfter.flatMap { OutsideValue.duration(seconds: $0) }), clock: clock)
            ad.invalidate()
            return .shown(ad, shown)
        }
        guard case .shown(let ad, let shown) = presented else {
            let blocked: [String] = if case .nothing(let blocked) = presented { blocked } else { [] }
            if json {
                print(ReportJSON.text(ShowReport.Nothing(placement: placement, blocked: blocked), compact: true))
            } else {
                print(TerminalText.escaped("\(placement): no fill, nothing shown"))
                for line in blocked { print(TerminalText.escaped("  \(line)")) }
            }
            throw ExitCode(1)
        }
        let report = ShowReport(placement: placement, ad: ad, shown: shown)
        if json {
            print(ReportJSON.text(report))
        } else {
            // Human output: every line escaped (ad ids, log entries and errors carry server text).
            let heading = "\(placement): showing \(ad.creative.id) from \(ad.networkID) (\(ad.creative.kind))"
            print(TerminalText.escaped(heading))
            for entry in shown.log {
                print(String(format: "  t=%5.1fs  ", ShowReport.seconds(entry.at)) + TerminalText.escaped("\(entry)"))
            }
            if let reward = report.reward {
                print(TerminalText.escaped("  reward: \(reward.text)"))
            } else {
                print("  reward: none (not a rewarded ad)")
            }
            if let delivery = report.deliveryError {
                print(TerminalText.escaped("  delivery incomplete: \(delivery)"))
            }
        }
        if shown.log.contains(where: \.isFailure) { throw ExitCode(1) }
    }

    /// What `show` presented: an ad and what happened, or nothing (with the lines the privacy rules blocked).
    enum Presented: Sendable {
        case shown(LoadedAd, FullScreenResult)
        case nothing(blocked: [String])
    }

    /// The JSON name of a delivery state.
    static func name(of delivery: AdEventDelivery) -> String {
        switch delivery {
        case .delivered: "delivered"
        case .queued: "queued"
        case .notSent: "not_sent"
        case .reported: "reported"
        case .alreadyReported: "already_reported"
        }
    }
}

/// The CLI's simulated renderer and user: renders at once; a video starts playing, reports its position every second
/// and its end (or fails after `failAt` of playback); the user watches for `watch` seconds on the manual clock
/// (tapping after one second when asked), then taps close; when the close button is not there yet, gives up and leaves
/// (a dismissal).
struct SimulatedViewer: FullScreenPresenter {
    let clock: ManualAdClock
    let watch: Duration
    let click: Bool
    var failAt: Duration? = nil

    /// A video whose network declares no length plays this long.
    static let defaultVideoLength: Duration = .seconds(30)

    func present(_ ad: LoadedAd, controls: FullScreenControls) async {
        let start = clock.now
        let end = start + watch
        await controls.renderBegan()
        var video: Duration?
        if case .video(let length) = controls.state.creative {
            video = length ?? Self.defaultVideoLength
            await controls.playbackStarted()
        }
        var second: Int64 = 0
        var clicked = false
        while clock.now < end {
            second += 1
            await clock.advance(to: min(end, start + .seconds(second)))
            if let length = video {
                let played = clock.now - start
                if let failAt, played >= failAt {
                    await controls.playbackFailed("simulated failure after \(failAt)")
                    video = nil
                } else if played >= length {
                    await controls.playbackProgressed(to: length, of: length)
                    await controls.playbackEnded()
                    video = nil
                } else {
                    await controls.playbackProgressed(to: played, of: length)
                }
            }
            if click && !clicked {
                clicked = true
                await controls.tapped()
            }
            await controls.refresh()
        }
        if click && !clicked { await controls.tapped() }
        _ = await controls.closeTapped()
    }
}
