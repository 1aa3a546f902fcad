import AdMediation
import Foundation
import Testing

// A model-based test of the full-screen ledger. The reference model below is written from the seed's and the
// issue's words (GrowthCat seed §8, §9, §12; IAB/MRC "begin to render"), not from the ledger's code: it keeps its own
// state in whole milliseconds and says, after each renderer signal, tap or clock step, which events are due, whether
// the close button is available and which reward claim is due. Seeded random sequences drive both; every step is
// compared, and the ledger's whole trace is checked against invariants that need no model at all.

/// The four kinds of full-screen ad the issue names.
private enum Kind: CaseIterable { case imageInterstitial, videoInterstitial, rewardedImage, rewardedVideo }

/// One step of a sequence.
private enum Step: CustomStringConvertible {
    case signal(RendererSignal)
    case clock(Int64)  // milliseconds forward

    var description: String {
        switch self {
        case .signal(let s): "\(s)"
        case .clock(let ms): "+\(ms)ms"
        }
    }
}

/// The reference model: the rules in the seed's words, in milliseconds.
private struct ReferenceModel {
    // The contract's terms, as plain numbers.
    let isVideo: Bool
    let impressionAtPlayback: Bool  // "video_start + impression fire when playback begins"
    let closeAfterShownMs: Int64?  // image: "After skippable_after_seconds, the X button appears"
    let closeAfterPlayedMs: Int64?  // video: the countdown counts playback
    let closeAtEnd: Bool  // "cannot close until video finishes"
    let eachTap: Bool  // "once per tap"
    let rewarded: Bool
    let minimumMs: Int64?  // "minimum_view_seconds"
    var lengthMs: Int64?

    var now: Int64 = 0
    var renderedAt: Int64?
    var started = false
    var playedMs: Int64 = 0
    var ended = false
    var failed = false
    var closed = false
    var impression = false
    var videoStart = false
    var quartiles: Set<Int> = []
    var complete = false
    var clicked = false
    var closedSent = false
    var claimed = false

    var playing: Bool { isVideo && started && !ended && !failed }

    /// "For rewarded placements the close button is hidden until minimum_view_seconds elapses (or the video
    /// finishes)"; an image's view is its time on screen, a video's its playback.
    func rewardMet() -> Bool {
        guard rewarded, !failed, let renderedAt else { return false }
        if !isVideo { return now - renderedAt >= (minimumMs ?? 0) }
        if ended { return true }
        guard started, let minimumMs else { return false }
        return playedMs >= minimumMs
    }

    /// The close button: never before the ad is on screen; at once after a failure ("a broken video must not trap
    /// the user"); else per the close policy, or the reward condition for a rewarded ad.
    func closeAvailable() -> Bool {
        if closed { return false }
        if failed { return true }
        guard let renderedAt else { return false }
        if rewarded { return rewardMet() }
        if let closeAfterShownMs { return now - renderedAt >= closeAfterShownMs }
        if isVideo, let closeAfterPlayedMs { return ended || (started && playedMs >= closeAfterPlayedMs) }
        if isVideo, closeAtEnd { return ended }
        return true
    }

    /// The claim due now, once: "Once the user has watched for minimum_view_seconds … with the actual elapsed
    /// seconds"; `completed` "true if video played to end". Issue 43: a video shorter than the minimum is claimed when
    /// the time on the ad reaches the minimum, never below it while the user is still there.
    mutating func claim() -> RewardClaim? {
        guard !claimed, !closed, rewardMet(), let renderedAt, now - renderedAt >= (minimumMs ?? 0) else { return nil }
        claimed = true
        return RewardClaim(viewed: .milliseconds(now - renderedAt), completed: !isVideo || ended)
    }

    /// A close tap on a shown close button claims what was not claimed yet: "at close, the actual elapsed seconds"
    /// (issue 43), whatever the minimum.
    mutating func claimAtClose() -> RewardClaim? {
        guard !claimed, !closed, closeAvailable(), rewardMet(), let renderedAt else { return nil }
        claimed = true
        return RewardClaim(viewed: .milliseconds(now - renderedAt), completed: !isVideo || ended)
    }

    mutating func reachedQuartiles(upTo fraction: (Int64, Int64)) -> [AdEvent] {
        var out: [AdEvent] = []
        for q in [25, 50, 75] where !quartiles.contains(q) && fraction.0 * 100 >= fraction.1 * Int64(q) {
            quartiles.insert(q)
            out.append(.videoProgress(percent: q))
        }
        return out
    }

    mutating func closeEvents() -> [AdEvent] {
        closed = true
        guard impression, !closedSent else { return [] }
        closedSent = true
        return [.closed]
    }

    /// The events a signal earns now, and whether a close tap closed.
    mutating func apply(_ signal: RendererSignal) -> (events: [AdEvent], closed: Bool?) {
        guard !closed else { return ([], nil) }
        var events: [AdEvent] = []
        switch signal {
        case .renderBegan:
            // "impression … Ad is visible and fully rendered (once per ad show)".
            if renderedAt == nil && !failed {
                renderedAt = now
                if !(isVideo && impressionAtPlayback) && !impression {
                    impression = true
                    events.append(.impression)
                }
            }
        case .playbackStarted:
            if isVideo && !failed && !started {
                started = true
                if renderedAt == nil { renderedAt = now }
                if !impression {
                    impression = true
                    events.append(.impression)
                }
                videoStart = true
                events.append(.videoStart)
            }
        case .playbackProgressed(let position, let length):
            if playing {
                let ms = position.nanosecondsClamped / 1_000_000
                if let length, length > .zero { lengthMs = length.nanosecondsClamped / 1_000_000 }
                playedMs = max(playedMs, ms)
                if let lengthMs { events += reachedQuartiles(upTo: (playedMs, lengthMs)) }
            }
        case .playbackStalled, .playbackResumed:
            break
        case .playbackFailed:
            if !failed && !ended { failed = true }
        case .playbackEnded:
            // "video_complete fires when video reaches the end": all of it was played.
            if playing {
                ended = true
                if let lengthMs { playedMs = max(playedMs, lengthMs) }
                events += reachedQuartiles(upTo: (1, 1))
                complete = true
                events.append(.videoComplete)
            }
        case .tapped:
            // "click … User taps the CTA (once per tap)"; a click needs an impression; nothing after a failure.
            if impression && !failed && (eachTap || !clicked) {
                clicked = true
                events.append(.click)
            }
        case .closeTapped:
            if closeAvailable() {
                return (events + closeEvents(), true)
            }
            return (events, false)
        }
        return (events, nil)
    }
}

/// What was checked.
private struct Counts {
    var sequences = 0
    var steps = 0
    var events = 0
    var claims = 0
    var closeChecks = 0
    var invariantChecks = 0
}

private func contractAndModel(_ kind: Kind, _ g: inout SplitMix64) -> (FullScreenContract, ReferenceModel) {
    let eachTap = Bool.random(using: &g)
    let clicks: FullScreenContract.Clicks = eachTap ? .eachTap : .oncePerAd
    let lengthMs: Int64? = Bool.random(using: &g) ? Int64.random(in: 1...15, using: &g) * 4000 : nil
    let minimumMs: Int64? = Bool.random(using: &g) ? Int64.random(in: 0...40, using: &g) * 1000 : nil
    switch kind {
    case .imageInterstitial:
        let wait = Int64.random(in: 0...10, using: &g) * 1000
        return (
            FullScreenContract(creative: .image, close: .afterShown(.milliseconds(wait)), clicks: clicks),
            ReferenceModel(
                isVideo: false, impressionAtPlayback: false, closeAfterShownMs: wait, closeAfterPlayedMs: nil,
                closeAtEnd: false, eachTap: eachTap, rewarded: false, minimumMs: nil, lengthMs: nil)
        )
    case .rewardedImage:
        return (
            FullScreenContract(
                creative: .image, clicks: clicks, reward: .init(minimumView: minimumMs.map(Duration.milliseconds))),
            ReferenceModel(
                isVideo: false, impressionAtPlayback: false, closeAfterShownMs: nil, closeAfterPlayedMs: nil,
                closeAtEnd: false, eachTap: eachTap, rewarded: true, minimumMs: minimumMs, lengthMs: nil)
        )
    case .videoInterstitial, .rewardedVideo:
        let atPlayback = Bool.random(using: &g)
        let skip: Int64? = Bool.random(using: &g) ? Int64.random(in: 0...20, using: &g) * 1000 : nil
        let rewarded = kind == .rewardedVideo
        let contract = FullScreenContract(
            creative: .video(duration: lengthMs.map(Duration.milliseconds)),
            impression: atPlayback ? .playbackStarted : .renderBegan,
            close: skip.map { .afterPlayed(.milliseconds($0)) } ?? .atEnd, clicks: clicks,
            reward: rewarded ? .init(minimumView: minimumMs.map(Duration.milliseconds)) : nil)
        return (
            contract,
            ReferenceModel(
                isVideo: true, impressionAtPlayback: atPlayback, closeAfterShownMs: nil, closeAfterPlayedMs: skip,
                closeAtEnd: skip == nil, eachTap: eachTap, rewarded: rewarded, minimumMs: minimumMs, lengthMs: lengthMs)
        )
    }
}

private func randomStep(_ g: inout SplitMix64, played: inout Int64) -> Step {
    switch Int.random(in: 0..<100, using: &g) {
    case 0..<8: return .signal(.renderBegan)
    case 8..<16: return .signal(.playbackStarted)
    case 16..<40:
        // Mostly forward, sometimes a seek back; now and then with the renderer's own length.
        played = max(0, played + Int64.random(in: -2000...9000, using: &g))
        let length: Duration? =
            Int.random(in: 0..<5, using: &g) == 0 ? .seconds(Int64.random(in: 1...15, using: &g) * 4) : nil
        return .signal(.playbackProgressed(to: .milliseconds(played), of: length))
    case 40..<44: return .signal(.playbackStalled)
    case 44..<48: return .signal(.playbackResumed)
    case 48..<51: return .signal(.playbackFailed(reason: "model"))
    case 51..<56: return .signal(.playbackEnded)
    case 56..<66: return .signal(.tapped)
    case 66..<72: return .signal(.closeTapped)
    default: return .clock(Int64.random(in: 0...6000, using: &g))
    }
}

/// Runs one seeded sequence; records a test issue on the first divergence.
private func runSequence(seed: UInt64, counts: inout Counts) -> Bool {
    var g = SplitMix64(seed: seed)
    let kind = Kind.allCases[Int.random(in: 0..<Kind.allCases.count, using: &g)]
    let (contract, start) = contractAndModel(kind, &g)
    var model = start
    let origin = AdInstant.zero + .seconds(100)
    var ledger = FullScreenLedger(contract: contract, presentedAt: origin)
    var trace: [(step: Int, event: AdEvent)] = []
    var claims: [RewardClaim] = []
    var history: [Step] = []
    var played: Int64 = 0
    let length = Int.random(in: 0...40, using: &g)
    counts.sequences += 1
    func fail(_ what: String) -> Bool {
        Issue.record("seed \(seed) (\(kind)) after \(history): \(what)")
        return false
    }
    for index in 0...length {
        let step: Step = index == length ? .signal(.closeTapped) : randomStep(&g, played: &played)
        history.append(step)
        counts.steps += 1
        var outputs: [FullScreenLedger.Output]
        var expected: [AdEvent] = []
        var closedNow: Bool?
        switch step {
        case .clock(let ms):
            model.now += ms
            outputs = ledger.advance(to: origin + .milliseconds(model.now))
        case .signal(let signal):
            let now = origin + .milliseconds(model.now)
            let before = model.claim() ?? (signal == .closeTapped ? model.claimAtClose() : nil)
            (expected, closedNow) = model.apply(signal)
            outputs = ledger.apply(signal, at: now)
            if let before { claims.append(before) }
        }
        if let after = model.claim() { claims.append(after) }
        let events = outputs.compactMap { if case .event(let e) = $0 { e } else { nil } }
        let ledgerClaims = outputs.compactMap { if case .rewardDue(let c) = $0 { c } else { nil } }
        counts.events += events.count
        if events != expected { return fail("events \(events), the model expects \(expected)") }
        let modelClaims = claims
        claims = []
        counts.claims += ledgerClaims.count
        // No claim `completed: true` for a video without a real end before any failure (checked without the model).
        for claim in ledgerClaims where claim.completed && contract.isVideo {
            counts.invariantChecks += 1
            let ended = history.firstIndex { if case .signal(.playbackEnded) = $0 { true } else { false } }
            let failed = history.firstIndex { if case .signal(.playbackFailed) = $0 { true } else { false } }
            guard let ended, failed.map({ ended < $0 }) ?? true else { return fail("completed: true without an end") }
        }
        if ledgerClaims != modelClaims { return fail("claims \(ledgerClaims), the model expects \(modelClaims)") }
        if let closedNow {
            let ledgerClosed = outputs.contains(.closed)
            let refused = outputs.contains { if case .closeRefused = $0 { true } else { false } }
            if ledgerClosed != closedNow || refused == closedNow {
                return fail("close \(ledgerClosed ? "closed" : "refused"), the model says \(closedNow)")
            }
        }
        counts.closeChecks += 1
        if ledger.isCloseAvailable(at: origin + .milliseconds(model.now)) != model.closeAvailable() {
            return fail("close availability \(!model.closeAvailable()), the model says \(model.closeAvailable())")
        }
        trace += events.map { (index, $0) }
        if model.closed { break }
    }
    if !model.closed {
        // The presenter leaves: a dismissal.
        let outputs = ledger.dismiss(at: origin + .milliseconds(model.now))
        let events = outputs.compactMap { if case .event(let e) = $0 { e } else { nil } }
        let expected = model.closeEvents()
        if events != expected { return fail("dismissal events \(events), the model expects \(expected)") }
        trace += events.map { (history.count, $0) }
    }
    return checkInvariants(
        trace.map(\.event), steps: trace.map(\.step), history: history, contract: contract, counts: &counts)
        || fail("an invariant broke: \(trace.map(\.event))")
}

/// Invariants on the ledger's trace that need no model: no event without its signal; at most once (clicks: once per
/// tap); the contract's order; nothing after a failure but `ad_closed`; nothing after the close.
private func checkInvariants(
    _ events: [AdEvent], steps: [Int], history: [Step], contract: FullScreenContract, counts: inout Counts
) -> Bool {
    func firstStep(_ match: (RendererSignal) -> Bool) -> Int? {
        history.firstIndex { if case .signal(let s) = $0 { match(s) } else { false } }
    }
    // A failure counts unless the video had already played to its end (then there is nothing left to fail).
    let completedAt = events.firstIndex(of: .videoComplete).map { steps[$0] }
    let failedAt = history.indices.first { index in
        guard case .signal(.playbackFailed) = history[index] else { return false }
        return completedAt.map { index < $0 } ?? true
    }
    let taps = history.filter { if case .signal(.tapped) = $0 { true } else { false } }.count
    var seen: [AdEvent: Int] = [:]
    for (position, event) in events.enumerated() {
        counts.invariantChecks += 1
        let step = steps[position]
        seen[event, default: 0] += 1
        // At most once; clicks once per tap (at most once per ad unless the contract counts each tap).
        let limit = event == .click ? (contract.clicks == .eachTap ? taps : 1) : 1
        guard let count = seen[event], count <= limit else { return false }
        // No event without its signal, at or before its step.
        let signal: Int?
        switch event {
        case .impression: signal = firstStep { $0 == .renderBegan || $0 == .playbackStarted }
        case .videoStart: signal = firstStep { $0 == .playbackStarted }
        case .videoProgress:
            signal = firstStep { if case .playbackProgressed = $0 { true } else { $0 == .playbackEnded } }
        case .videoComplete: signal = firstStep { $0 == .playbackEnded }
        case .click: signal = firstStep { $0 == .tapped }
        case .closed: signal = history.count  // the close tap or the dismissal: checked as last below
        case .reported: return false
        }
        guard let signal, signal <= step || event == .closed else { return false }
        // Nothing after a failure but ad_closed.
        if let failedAt, step >= failedAt, event != .closed { return false }
        // The order: impression first, ad_closed last, the video's events in sequence.
        if position == 0 && event != .impression { return false }
        if event == .closed && position != events.count - 1 { return false }
    }
    let videoOrder: [AdEvent] = [
        .videoStart, .videoProgress(percent: 25), .videoProgress(percent: 50), .videoProgress(percent: 75),
        .videoComplete,
    ]
    let videoEvents = events.filter { videoOrder.contains($0) }
    counts.invariantChecks += 1
    return videoEvents == Array(videoOrder.prefix(videoEvents.count))
}

@Suite("Full-screen ledger against a reference model")
struct FullScreenLedgerModelTests {
    /// 5 000 sequences by default; `MODEL_RUNS=N` for a long run.
    @Test func theLedgerAgreesWithTheReferenceModelOnSeededRandomSequences() {
        let runs = ProcessInfo.processInfo.environment["MODEL_RUNS"].flatMap { Int($0) }.map { max(1, $0) } ?? 5000
        var counts = Counts()
        var failures = 0
        for seed in 0..<UInt64(runs) where !runSequence(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 1, counts: &counts) {
            failures += 1
            if failures >= 5 { break }
        }
        print(
            "ledger model: \(counts.sequences) sequences, \(counts.steps) steps, \(counts.events) events, "
                + "\(counts.claims) reward claims, \(counts.closeChecks) close checks, "
                + "\(counts.invariantChecks) invariant checks; \(failures) divergent")
        #expect(failures == 0)
        #expect(counts.sequences == runs)
    }
}
