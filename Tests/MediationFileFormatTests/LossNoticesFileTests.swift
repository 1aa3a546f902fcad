import AdMediation
import Foundation
import MediationFileFormat
import Testing

/// `loss_notices` (issue 44, the losing bidder's price): a placement may tell its losing bidders only the loss reason.
@Suite("Mediation configuration file: loss_notices", .timeLimit(.minutes(1)))
struct LossNoticesFileTests {
    func placement(_ extra: String) -> String {
        #"{"placements": {"p": {"format": "interstitial", \#(extra) "lines": [{"network": "n", "placement": "x"}]}}}"#
    }

    func problem(_ json: String) -> String? {
        do {
            _ = try MediationConfiguration.decode(json: Data(json.utf8))
            return nil
        } catch {
            return error.message
        }
    }

    @Test func aPlacementWithoutLossNoticesTellsLosersTheReasonAndThePrice() throws {
        let configuration = try MediationConfiguration.decode(json: Data(placement("").utf8))
        #expect(configuration.placements["p"]?.lossNotices == .reasonAndPrice)
    }

    @Test func lossNoticesReasonOnlyIsRead() throws {
        let json = placement(#""loss_notices": "reason_only","#)
        let configuration = try MediationConfiguration.decode(json: Data(json.utf8))
        #expect(configuration.placements["p"]?.lossNotices == .reasonOnly)
    }

    @Test func anUnknownLossNoticesValueIsRefusedAtItsField() throws {
        let message = try #require(problem(placement(#""loss_notices": "none","#)))
        #expect(message.hasPrefix("placements.p.loss_notices"), "\(message)")
    }

    @Test func aMisspeltLossNoticesKeySuggestsTheNearestKey() {
        #expect(
            problem(placement(#""loss_notice": "reason_only","#))
                == #"placements.p.loss_notice: unknown key; did you mean "loss_notices"?"#)
    }

    @Test func lossNoticesReasonOnlyRoundTripsThroughTheFileForm() throws {
        var placement = PlacementConfiguration(
            format: .interstitial, lines: [WaterfallLine(network: "n", placement: "x")])
        placement.lossNotices = .reasonOnly
        let configuration = MediationConfiguration(placements: ["p": placement])
        let json = try JSONEncoder().encode(configuration)
        #expect(String(decoding: json, as: UTF8.self).contains(#""loss_notices":"reason_only""#))
        #expect(try MediationConfiguration.decode(json: json) == configuration)
    }
}
