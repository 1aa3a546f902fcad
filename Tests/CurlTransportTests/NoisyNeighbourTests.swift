import AdMediation
import CurlTransport
import Foundation
import TestSupport
import Testing

/// The noisy-neighbour matrix, functional half (issue 31 item 1): beside each hostile server kind, on the same
/// client, a good line keeps answering, the hostile line ends the way its kind should, and the client shuts down
/// with a hostile exchange in flight. The wall-clock bounds (the good line within 10 ms of alone, the shutdown within
/// a second) are in `TimingTests.NoisyNeighbourTimingTests`.
@Suite("Noisy neighbours", .timeLimit(.minutes(2)))
struct NoisyNeighbourTests {
    static let expected: [HostileKind: String] = [
        .headerFlood: "error:response_too_large", .slowDrip: "error:timeout", .neverClosing: "error:timeout",
        .hugeBody: "error:response_too_large", .redirectChain: "error:too_many_redirects",
        .reset: "error:connection_reset", .noticeSink: "20 × error:timeout",
    ]

    @Test(arguments: HostileKind.allCases)
    func aGoodLineKeepsAnsweringBesideAHostileOne(kind: HostileKind) async throws {
        let row = try await measureNeighbour(kind, samples: 5)
        #expect(row.goodFailures == 0, "\(row)")
        #expect(row.goodBeside >= 5, "good requests while the hostile line was in flight: \(row)")
        #expect(row.hostileOutcome == Self.expected[kind], "\(row)")
    }
}
