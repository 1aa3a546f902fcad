import AdMediation
import Testing

/// Issue 47 item 5: a configuration's check against the networks lists every problem — every placement, every
/// line, every bidder, every arm — not the first of each placement.
@Suite("Mediation configuration: every validation problem at once", .timeLimit(.minutes(1)))
struct ValidationProblemsTests {
    static let networks: [String: Set<AdFormat.Kind>] = ["mars": [.tile], "bid": [.interstitial]]

    static func line(_ network: String, _ placement: String = "x") -> WaterfallLine {
        WaterfallLine(network: network, placement: placement)
    }

    @Test func everyLineAndBidderOfOnePlacementIsListed() {
        let configuration = MediationConfiguration(placements: [
            "p": PlacementConfiguration(
                format: .interstitial, lines: [Self.line("gone"), Self.line("mars"), Self.line("bid", "")],
                maxInFlight: 0, bidders: [BidderLine(network: "lost", placement: "t")])
        ])
        #expect(
            configuration.problems(networks: Self.networks) == [
                "placements.p.max_in_flight: must be 1…64, got 0",
                #"placements.p.lines[0].network: unknown network "gone""#,
                #"placements.p.lines[1].network: network "mars" does not serve format "interstitial""#,
                "placements.p.lines[2].placement: must not be empty",
                #"placements.p.bidders[0].network: unknown network "lost""#,
            ])
    }

    @Test func everyFieldOfOneLineIsListed() {
        let configuration = MediationConfiguration(placements: [
            "p": PlacementConfiguration(
                format: .tile,
                lines: [WaterfallLine(network: "mars", placement: "", floorEcpm: -1, timeout: .zero, ecpm: -2)])
        ])
        #expect(
            configuration.problems(networks: Self.networks) == [
                "placements.p.lines[0].placement: must not be empty",
                "placements.p.lines[0].timeout_ms: must be 1…600000, got 0.0",
                "placements.p.lines[0].floor_ecpm: must be 0…1000000, got -1.0",
                "placements.p.lines[0].ecpm: must be 0…1000000, got -2.0",
            ])
    }

    @Test func anArmsProblemsAreListedAtTheArmAndThePlacementsOnlyOnce() {
        let configuration = MediationConfiguration(placements: [
            "p": PlacementConfiguration(
                format: .tile, lines: [Self.line("mars")], maxInFlight: 99,
                optimizer: OptimizerConfiguration(pinned: [0]),
                arms: [
                    PlacementArm(label: "a", weight: 0, lines: [Self.line("gone")]),
                    PlacementArm(label: "a", lines: [], bidders: []),
                    PlacementArm(label: "c", optimizer: OptimizerConfiguration(exploration: 2, pinned: [4])),
                ])
        ])
        #expect(
            configuration.problems(networks: Self.networks) == [
                "placements.p.max_in_flight: must be 1…64, got 99",
                "placements.p.arms[0].weight: must be over 0 and at most 1000000, got 0.0",
                #"placements.p.arms[0].lines[0].network: unknown network "gone""#,
                #"placements.p.arms[1].label: "a" is used twice"#,
                "placements.p.arms[1].lines: the waterfall is empty (and there are no bidders)",
                "placements.p.arms[1].optimizer.pinned[0]: no line 0 (the waterfall has 0)",
                "placements.p.arms[2].optimizer.exploration: must be 0…1, got 2.0",
                "placements.p.arms[2].optimizer.pinned[0]: no line 4 (the waterfall has 1)",
            ])
    }

    @Test func theBreakersAndEveryPlacementsProblemsAreListedInOrder() {
        let configuration = MediationConfiguration(
            placements: [
                "b": PlacementConfiguration(format: .tile, lines: [Self.line("mars"), Self.line("mars")]),
                "a": PlacementConfiguration(format: .tile, lines: [], deadline: .seconds(700)),
            ],
            circuitBreaker: CircuitBreakerConfiguration(failureThreshold: 0, coolDown: .seconds(-1)))
        #expect(
            configuration.problems(networks: Self.networks) == [
                "circuit_breaker.failure_threshold: must be 1…10000, got 0",
                "circuit_breaker.cool_down_s: must be 0…604800, got -1.0",
                "placements.a.lines: the waterfall is empty (and there are no bidders)",
                "placements.a.deadline_ms: must be 1…600000, got 700000.0",
                #"placements.b.lines[1]: duplicate of lines[0] (network "mars", placement "x")"#,
            ])
    }

    @Test func validateThrowsEveryProblemOnePerLine() {
        let configuration = MediationConfiguration(placements: [
            "p": PlacementConfiguration(format: .tile, lines: [Self.line("gone"), Self.line("bid")])
        ])
        #expect(
            throws: AdError(
                .configuration,
                #"placements.p.lines[0].network: unknown network "gone""# + "\n"
                    + #"placements.p.lines[1].network: network "bid" does not serve format "tile""#)
        ) {
            try configuration.validate(networks: Self.networks)
        }
    }

    @Test func pastTwentyProblemsValidateListsTheFirstTwentyAndCountsTheRest() {
        let configuration = MediationConfiguration(placements: [
            "p": PlacementConfiguration(format: .tile, lines: (0..<25).map { Self.line("gone", "x\($0)") })
        ])
        #expect(configuration.problems(networks: Self.networks).count == 25)
        do {
            try configuration.validate(networks: Self.networks)
            Issue.record("accepted")
        } catch {
            let lines = error.message.split(separator: "\n")
            #expect(lines.count == 21, "\(error.message)")
            #expect(lines.last == "… and 5 more problems")
        }
    }

    @Test func aValidConfigurationHasNoProblem() throws {
        let configuration = MediationConfiguration(placements: [
            "p": PlacementConfiguration(
                format: .tile, lines: [Self.line("mars")],
                arms: [PlacementArm(label: "a"), PlacementArm(label: "b", lines: [Self.line("mars", "y")])])
        ])
        #expect(configuration.problems(networks: Self.networks).isEmpty)
        try configuration.validate(networks: Self.networks)
    }
}
