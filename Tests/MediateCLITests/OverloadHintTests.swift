import AdMediation
import Testing

@testable import mediate

/// Issue 47 item 1: when every request failed, the hint names the likely cause from the evidence. Timeouts at a
/// concurrency far above the machine's cores mean the run overloads the machine, not that the servers are slow.
@Suite("compare: the overload hint")
struct OverloadHintTests {
    static let overload = "the run likely overloads this machine; lower --concurrency"

    @Test func everyRequestTimedOutAtHighConcurrencyNamesTheOverload() {
        let hint = Compare.likelyCause(["timeout": 500], 256, cores: 2)
        #expect(hint.contains(Self.overload), "\(hint)")
        #expect(hint.contains("--concurrency 256 on 2 cores"), "the evidence: \(hint)")
    }

    @Test func timeoutsAtALowConcurrencyBlameTheServersNotTheMachine() {
        let hint = Compare.likelyCause(["timeout": 500], 8, cores: 2)
        #expect(!hint.contains("overloads"), "8 requests at once on 2 cores is no overload: \(hint)")
        #expect(hint.contains("answer too slowly"), "\(hint)")
    }

    @Test func mostlyTimeoutsAtHighConcurrencyStillNameTheOverload() {
        let hint = Compare.likelyCause(["timeout": 90, "network": 10], 256, cores: 2)
        #expect(hint.contains(Self.overload), "90 % timeouts: \(hint)")
    }

    @Test func fewerThanNineInTenTimeoutsAreNotCalledAnOverload() {
        let hint = Compare.likelyCause(["timeout": 89, "server_500": 11], 256, cores: 2)
        #expect(!hint.contains("overloads"), "\(hint)")
    }

    @Test func theOverloadThresholdIsFourRequestsInFlightPerCore() {
        #expect(!Compare.likelyCause(["timeout": 10], 32, cores: 8).contains("overloads"))
        #expect(Compare.likelyCause(["timeout": 10], 33, cores: 8).contains("overloads"))
    }
}
