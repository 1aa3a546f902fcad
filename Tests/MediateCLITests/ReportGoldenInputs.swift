import Foundation

@testable import AdMediation
@testable import mediate

/// Fixed inputs for the reports' goldens (``ReportGoldenTests``): tallies, traces and exchanges built by hand, with no
/// clock and no network, so every output is the same on every run.
enum GoldenInputs {
    /// One request's answer.
    static func sample(
        filled: Bool = false, revenue: Double? = nil, precision: RevenuePrecision = .estimated, winner: Int? = nil,
        error: AdError? = nil, label: String? = nil
    ) -> Sample {
        var sample = Sample(nil)
        sample.filled = filled
        sample.winner = winner
        sample.error = error
        sample.abLabel = label
        sample.revenue = revenue.map {
            ImpressionRevenue(value: $0, precision: precision, networkID: "n", placement: "p")
        }
        return sample
    }

    /// A tally of `samples`, the i-th taking 3 + 7 × i mod 41 ms in second i / 4 of the run.
    static func tally(_ samples: [Sample]) -> Tally {
        var tally = Tally()
        for (index, sample) in samples.enumerated() {
            tally.record(latency: .microseconds(3000 + (7 * index % 41) * 1000 + index), second: index / 4, sample)
        }
        return tally
    }

    static let blockedByGDPR = AdError(.privacyBlocked, "gdpr applies without a tcf string")
    static let blockedByPurpose = AdError(.privacyBlocked, "tcf purpose 1 not consented for vendor 755")

    /// A waterfall of 14 requests under two A/B labels: wins of both lines at three precisions, timeouts, blocked
    /// requests and a no-fill.
    static var waterfall: Tally {
        var samples: [Sample] = []
        for index in 0..<4 {
            samples.append(sample(filled: true, revenue: 0.0012, winner: 0, label: index % 2 == 0 ? "a" : "b"))
        }
        samples.append(sample(filled: true, revenue: 0.00085, precision: .publisherDefined, winner: 1, label: "a"))
        samples.append(sample(filled: true, revenue: 0.00085, precision: .publisherDefined, winner: 1, label: "b"))
        samples.append(sample(filled: true, revenue: 0, precision: .undefined, winner: 1, label: "b"))
        samples.append(sample(error: AdError(.timeout, "timed out"), label: "a"))
        samples.append(sample(error: AdError(.timeout, "timed out"), label: "b"))
        samples.append(sample(error: blockedByGDPR, label: "a"))
        samples.append(sample(error: blockedByGDPR, label: "b"))
        samples.append(sample(label: "a"))
        samples.append(sample(filled: true, revenue: 0.0031, precision: .exact, winner: 0, label: "a"))
        samples.append(sample(error: AdError(.breakerOpen, "open"), label: "b"))
        return tally(samples)
    }

    /// A line's network alone: priced fills, server errors, no fills.
    static var chartboost: Tally {
        tally(
            (0..<5).map { _ in sample(filled: true, revenue: 0.0012) }
                + (0..<2).map { _ in sample(error: AdError(.server(status: 500), "server error")) }
                + (0..<7).map { _ in sample() })
    }

    /// A line's network alone: blocked by two rules, one unpriced fill.
    static var appOpen: Tally {
        tally(
            (0..<3).map { _ in sample(error: blockedByGDPR) } + [sample(error: blockedByPurpose)]
                + [sample(filled: true, revenue: 0, precision: .undefined)] + (0..<9).map { _ in sample() })
    }

    /// Two placements: one with two lines (names with a slash, a comma, quotes and markup), one with a single
    /// unanswered request and no line.
    static var reports: [PlacementReport] {
        [
            PlacementReport(
                id: "home/main <&>", mediated: waterfall,
                lines: [("cb", "Main Menu", chartboost), ("ao", "ca-app-pub-1/2 \"x\", y", appOpen)]),
            PlacementReport(id: "menu", mediated: tally([sample()]), lines: []),
        ]
    }

    /// `--baseline`: one placement of the two, with its counts and revenue interval.
    static let baselineJSON = """
        {"placements": [{"id": "home/main <&>", "requests": 20, "fills": 9, "fill_rate": 0.45, \
        "latency_ms": {"p50": 4, "p95": 30.5, "p99": 44}, "revenue": {"per_1000_requests_usd": 0.61, \
        "per_1000_requests_usd_ci95": [0.2, 1.02]}}]}
        """

    /// `--arms`: two placements, the second with an arm that ran no request and no revenue at all.
    static var arms: [(placement: String, arms: [(arm: Arm, tally: Tally)])] {
        [
            ("home/main", [(.static, chartboost), (.optimized, waterfall), (.auction, appOpen)]),
            ("menu", [(.static, tally([sample(), sample(filled: true, revenue: 0)])), (.waterfall, Tally())]),
        ]
    }

    /// A mediated request with a line and a bid of every outcome.
    static let trace = MediationTrace(
        placement: "home",
        lines: [
            LineTrace(
                network: "cb", placement: "Main Menu", outcome: .fill, latency: .microseconds(12_345), ecpm: 1.25,
                privacyRestrictions: ["coppa", "invalid us_privacy \"1yyn\" (invalid_field)"]),
            LineTrace(
                network: "ao", placement: "ca-app-pub-1/2", outcome: .noFill(reason: "no ad"),
                latency: .milliseconds(7), ecpm: nil),
            LineTrace(
                network: "gc", placement: "g1", outcome: .error(AdError(.network, "connection refused")),
                latency: .microseconds(1500), ecpm: nil),
            LineTrace(network: "gc", placement: "g2", outcome: .timeout, latency: .milliseconds(30), ecpm: nil),
            LineTrace(
                network: "mars", placement: "m1", outcome: .skipped(.privacyBlocked), latency: nil, ecpm: nil,
                privacyReason: "tcf purpose 1 not consented for vendor 755"),
            LineTrace(
                network: "mars", placement: "m2", outcome: .skipped(.cancelled), latency: .milliseconds(9), ecpm: 2),
        ],
        winnerIndex: 0, duration: .milliseconds(40), abLabel: "b",
        bids: [
            BidTrace(
                network: "rtb", placement: "imp-1", outcome: .fill, price: 2.5, latency: .milliseconds(20),
                auction: .won(clearingPrice: 1.26)),
            BidTrace(
                network: "rtb2", placement: "imp-2", outcome: .fill, price: 1, latency: .microseconds(19_999),
                auction: .lost(reason: .lostToHigherBid, winningPrice: 2.5)),
            BidTrace(
                network: "rtb3", placement: "imp-3", outcome: .fill, price: 0.5, latency: .milliseconds(5),
                auction: .lost(reason: .belowFloor, winningPrice: nil)),
            BidTrace(
                network: "rtb4", placement: "imp-4", outcome: .error(AdError(.invalidResponse, "bad json")), price: nil,
                latency: .milliseconds(3), auction: nil),
            BidTrace(
                network: "rtb5", placement: "imp-5", outcome: .noFill(reason: "no bid"), price: nil, latency: nil,
                auction: nil),
            BidTrace(
                network: "rtb6", placement: "imp-6", outcome: .skipped(.privacyBlocked), price: nil, latency: nil,
                auction: nil, privacyReason: "gdpr applies without a tcf string", privacyRestrictions: ["coppa"]),
            BidTrace(network: "rtb7", placement: "imp-7", outcome: .timeout, price: nil, latency: nil, auction: nil),
        ], winningBid: 0)

    /// A mediated request whose placement has no line and no bidder.
    static let emptyTrace = MediationTrace(placement: "home", lines: [], winnerIndex: nil, duration: .zero)

    /// The winner of ``trace``.
    static let winner = LoadWinner(
        network: "cb", ecpm: 1.25, adID: "ad-<1>/2",
        revenue: ImpressionRevenue(
            value: 0.00125, precision: .estimated, networkID: "cb", placement: "home",
            line: WinningLine(index: 0, network: "cb", networkPlacement: "Main Menu", abLabel: "b")))

    /// `--bodies`: a redacted request, a cut response, a transport error, a body that is not UTF-8.
    static let exchanges = [
        BodyRecorder.Exchange(
            method: "POST", url: "http://127.0.0.1:9/cb/v1?key=s3cret-key",
            requestBody: Data(#"{"k":"s3cret-key"}"#.utf8), status: 200,
            responseBody: Data(repeating: 0x61, count: 4100), error: nil),
        BodyRecorder.Exchange(
            method: "GET", url: "http://127.0.0.1:9/ao", requestBody: Data(), status: nil,
            responseBody: Data([0xff, 0xfe]), error: "connection refused (s3cret-key)"),
    ]

    /// A network asked alone, for each way it can answer.
    static let alone: [String: (AloneAnswer.Outcome, LoadWinner?)] = [
        "fill": (
            .fill(ecpm: nil),
            LoadWinner(
                network: "ao", ecpm: nil, adID: "a1",
                revenue: ImpressionRevenue(value: 0, precision: .undefined, networkID: "ao", placement: "x"))
        ),
        "no-fill": (.noFill, nil),
        "blocked": (.blocked("gdpr applies without a tcf string"), nil),
        "error": (.error(AdError(.server(status: 503), "unavailable")), nil),
    ]

    /// The configuration `list` and `consent` read.
    static let config = """
        {"networks": {
           "ao": {"type": "appopen", "base_url": "http://127.0.0.1:9/ao?token=t0psecret"},
           "cb": {"type": "chartboost", "base_url": "http://127.0.0.1:9/cb", "app_id": "cb_app_x", \
        "app_signature": "s3cret-signature"}},
         "placements": {
           "launch": {"format": "app_open", "lines": [{"network": "ao", "placement": "ca-app-pub-1/2", \
        "timeout_ms": 2000}]},
           "banner": {"format": "banner", "size": "320x50", "lines": [{"network": "cb", "placement": "Main Menu", \
        "timeout_ms": 1500, "floor_ecpm": 0.5, "ecpm": 1.5}]}}}
        """
}
