import AdMediation
import Foundation
import MediationFileFormat
import Testing

/// Bidders, the optimizer and A/B arms read from the file form, then validated: errors name the field path.
@Suite("Mediation configuration file: bidders, optimizer, arms", .timeLimit(.minutes(1)))
struct PlacementFileTests {
    @Test("a bidder naming an unknown network, or an unknown auction type, is refused at its field")
    func bidderConfigurationErrorsNameTheField() throws {
        let json =
            #"{"placements": {"p": {"format": "interstitial", "bidders": [{"network": "zz", "placement": "t"}]}}}"#
        let configuration = try MediationConfiguration.decode(json: Data(json.utf8))
        #expect(throws: AdError(.configuration, #"placements.p.bidders[0].network: unknown network "zz""#)) {
            try configuration.validate(networks: ["a": [.interstitial]])
        }
        let auction =
            (#"{"placements": {"p": {"format": "interstitial", "bidders": [], "lines": "#
                + #"[{"network": "a", "placement": "x"}], "auction": "third_price"}}}"#)
        #expect(throws: AdError.self) { try MediationConfiguration.decode(json: Data(auction.utf8)) }
    }

    @Test("a pinned line the waterfall does not have is refused at its field")
    func optimizerSettingsOutOfRangeNameTheField() throws {
        let json =
            (#"{"placements": {"p": {"format": "interstitial", "lines": "#
                + #"[{"network": "n", "placement": "x"}], "optimizer": {"pinned": [3]}}}}"#)
        let configuration = try MediationConfiguration.decode(json: Data(json.utf8))
        #expect(throws: AdError(.configuration, "placements.p.optimizer.pinned[0]: no line 3 (the waterfall has 1)")) {
            try configuration.validate(networks: ["n": [.interstitial]])
        }
    }

    @Test("an A/B arm with a label used twice, a weight of 0 or an unknown network is refused at its field")
    func armsWithADuplicateLabelOrABadWeightAreRefused() throws {
        let line = #"[{"network": "n", "placement": "a"}]"#
        for (arms, message) in [
            (#"[{"label": "x"}, {"label": "x"}]"#, #"placements.p.arms[1].label: "x" is used twice"#),
            (
                #"[{"label": "x", "weight": 0}]"#,
                "placements.p.arms[0].weight: must be over 0 and at most 1000000, got 0.0"
            ),
            (
                #"[{"label": "x", "lines": [{"network": "zz", "placement": "q"}]}]"#,
                #"placements.p.arms[0].lines[0].network: unknown network "zz""#
            ),
        ] {
            let json = #"{"placements": {"p": {"format": "interstitial", "lines": \#(line), "arms": \#(arms)}}}"#
            let configuration = try MediationConfiguration.decode(json: Data(json.utf8))
            #expect(throws: AdError(.configuration, message)) {
                try configuration.validate(networks: ["n": [.interstitial]])
            }
        }
    }

    @Test("bidders, arms, the optimizer, the mode and the auction type encode to the file form and decode back equal")
    func everyPartRoundTripsThroughTheFileForm() throws {
        let optimizer = OptimizerConfiguration(exploration: 0.25, pinned: [0], halfLifeRequests: 500, seed: 7)
        let configuration = MediationConfiguration(placements: [
            "p": PlacementConfiguration(
                format: .interstitial, mode: .sequential,
                lines: [WaterfallLine(network: "n", placement: "a", floorEcpm: 1.5, ecpm: 2)], maxInFlight: 2,
                abLabel: "base",
                bidders: [BidderLine(network: "b", placement: "t", floorEcpm: 0.5, timeout: .milliseconds(300))],
                auction: .secondPrice, optimizer: optimizer,
                arms: [
                    PlacementArm(
                        label: "test", weight: 3, lines: [WaterfallLine(network: "n", placement: "z")],
                        bidders: [], auction: .firstPrice, optimizer: OptimizerConfiguration(exploration: 0))
                ])
        ])
        let json = try JSONEncoder().encode(configuration)
        let text = String(decoding: json, as: UTF8.self)
        for key in [#""half_life_requests":500"#, #""auction":"second_price""#, #""mode":"sequential""#] {
            #expect(text.contains(key), "\(key) in \(text)")
        }
        #expect(try MediationConfiguration.decode(json: json) == configuration)
    }
}
