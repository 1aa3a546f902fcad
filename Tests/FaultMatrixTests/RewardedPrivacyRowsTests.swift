import AdMediation
import AdMediationTesting
import AdNetworkConformance
import CurlTransport
import DemandSandbox
import Foundation
import GrowthCatAds
import TestSupport
import Testing

/// Plays a rewarded video to its end and closes: rendered, playing, 30 s of playback, ended, close.
private struct WatchingViewer: FullScreenPresenter {
    let clock: ManualAdClock
    func present(_ ad: LoadedAd, controls: FullScreenControls) async {
        await controls.renderBegan()
        await controls.playbackStarted()
        await clock.advance(by: .seconds(30))
        await controls.playbackEnded()
        _ = await controls.closeTapped()
    }
}

/// The privacy matrix's rewarded rows (issue 43 item 1): a rewarded GrowthCat view for a spread of the matrix's consent
/// combinations, through the mediator, against the demand sandbox over loopback HTTP. Expectations from the texts
/// (the privacy article's "Rewards" section: ATT's definition of tracking, COPPA's support for internal operations,
/// TCF's scope — confirming a reward the user asked for, with the app's own account id, to the network that served the
/// view): where the table lets GrowthCat be asked, the view is rewarded and its validation carries the app's account
/// id, whatever the table decides for identifiers; the catalog query carries the user id only where the table
/// allows it; where the table does not let GrowthCat be asked, nothing is shown and nothing validated.
/// 252 rewarded views in a row over loopback: near 2 minutes under load, so the time limit (a hang guard) is 5.
@Suite("Privacy matrix: rewarded rows", .timeLimit(.minutes(5)))
struct RewardedPrivacyRowsTests {
    /// Every 12th combination of the 3024 (252): every value of every dimension appears.
    static let rows = PrivacyCombination.all.enumerated().filter { $0.offset % 12 == 0 }.map(\.element)
    static let growthcat = PrivacyNetwork(name: "growthcat", vendor: 901, format: .interstitial, placement: "p")

    @Test("every consent state: rewarded where asked, the account id on the validation only")
    func rewardedRows() async throws {
        let sandbox = try await DemandSandbox.start(scenario: SandboxScenario(seed: 1))
        let curl = CurlHTTPClient()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rewarded-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wire = RecordingHTTPClient(wrapping: curl)
        let adapter = try PrivacyMatrixTests.makeAdapter(
            Self.growthcat, sandbox: sandbox, http: wire, directory: directory)
        let mediator = try Mediator(
            networks: [adapter],
            configuration: MediationConfiguration(placements: [
                "p": PlacementConfiguration(
                    format: .interstitial,
                    lines: [
                        WaterfallLine(network: adapter.id, placement: "rewarded_coins", timeout: HangGuard.request)
                    ],
                    deadline: HangGuard.request)
            ]),
            privacy: PrivacyConfiguration(tcfVendorIDs: [adapter.id: Self.growthcat.vendor]))
        let account = PrivacyMatrixTests.userID
        var counts: [String: Int] = [:]
        for combination in Self.rows {
            let expected = expectation(combination, Self.growthcat)
            let before = wire.requestCount
            let request = AdRequest(
                placement: "p", format: .interstitial, userID: account, privacy: combination.signals)
            let ad = try? await mediator.load(request).ad
            var reward: AdReward?
            if let ad {
                let clock = ManualAdClock()
                reward = try? await ad.presentFullScreen(on: WatchingViewer(clock: clock), clock: clock).reward
                ad.invalidate()
            }
            let sent = wire.requestTexts.dropFirst(before)
            let catalog = sent.filter { $0.contains("/ads/catalog") || $0.contains("/ads/serve") }
            let validations = sent.filter { $0.contains("/reward/validate") }
            counts["rows", default: 0] += 1
            var problems: [String] = []
            if expected.asked {
                counts["rewarded", default: 0] += reward == nil ? 0 : 1
                if reward == nil { problems.append("not rewarded") }
                if validations.count != 1 || !(validations.first ?? "").contains(account) {
                    problems.append("validation without the account id: \(validations.count)")
                }
                if !expected.userID, catalog.contains(where: { $0.contains(account) }) {
                    problems.append("the user id in the catalog query")
                }
            } else {
                counts["blocked", default: 0] += 1
                if ad != nil || !validations.isEmpty || !catalog.isEmpty { problems.append("asked while blocked") }
            }
            if !problems.isEmpty { Issue.record("\(combination): \(problems)") }
        }
        await curl.shutdown()
        await sandbox.shutdown()
        print(
            "rewarded rows: \(counts["rows", default: 0]) consent states; rewarded \(counts["rewarded", default: 0]), "
                + "not asked \(counts["blocked", default: 0])")
        #expect(counts["rows"] == Self.rows.count)
        #expect(counts["rewarded", default: 0] > 0 && counts["blocked", default: 0] > 0)
    }
}
