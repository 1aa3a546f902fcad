import DemandSandbox
import Foundation
import Testing

/// A misspelt key in a sandbox scenario is refused at its path with the nearest valid key (issue 32 item 3), instead
/// of the field silently keeping its default (a `fill_rte` of 0 filling every request).
@Suite("Sandbox scenario: unknown keys", .timeLimit(.minutes(1)))
struct ScenarioKeyTests {
    func problem(_ json: String) -> String? {
        do {
            _ = try SandboxScenario.decode(json: Data(json.utf8))
            return nil
        } catch {
            return error.description
        }
    }

    @Test(arguments: [
        (
            #"{"networks": {"mars": {"fill_rte": 0}}}"#,
            #"networks.mars.fill_rte: unknown key; did you mean "fill_rate"?"#
        ),
        (#"{"sed": 1}"#, #"sed: unknown key; did you mean "seed"?"#),
        (
            #"{"networks": {"mars": {"faults": [{"kind": "reset", "retry_after": 1}]}}}"#,
            #"networks.mars.faults[0].retry_after: unknown key; did you mean "retry_after_s"?"#
        ),
        (
            #"{"placements": {"mars/t": {"drift": [{"after_request": 5}]}}}"#,
            #"placements.mars/t.drift[0].after_request: unknown key; did you mean "after_requests"?"#
        ),
        (
            #"{"networks": {"mars": {"ecpm": {"lognormal": {"median": 1, "sigma": 1}}}}}"#,
            #"networks.mars.ecpm.lognormal: unknown key; did you mean "log_normal"?"#
        ),
        (
            #"{"networks": {"growthcat": {"validation_faults": [{"kind": "reset", "delay": 5}]}}}"#,
            #"networks.growthcat.validation_faults[0].delay: unknown key; did you mean "delay_ms"?"#
        ),
        (
            #"{"networks": {"mars": {"ecpm": {"uniform": {"min": 1, "maxi": 3}}}}}"#,
            #"networks.mars.ecpm.uniform.maxi: unknown key; did you mean "max"?"#
        ),
    ])
    func aMisspeltScenarioKeyIsRefusedNamingItsPathAndTheNearestKey(json: String, expected: String) {
        #expect(problem(json) == "scenario: " + expected)
    }

    @Test func aScenarioWithEveryKeySpeltRightStillLoads() throws {
        let scenario = try SandboxScenario.decode(
            json: Data(
                #"""
                {"seed": 7, "networks": {"mars": {"fill_rate": 0.5, "ecpm": {"uniform": {"min": 1, "max": 3}},
                 "latency_ms": {"log_normal": {"median": 5, "sigma": 0.5}},
                 "faults": [{"kind": "status", "rate": 0.1, "status": 429, "retry_after_s": 2}],
                 "drift": [{"after_requests": 10, "fill_rate": 0.2, "ecpm": {"fixed": 1}}]}},
                 "placements": {"mars/t": {"fill_rate": 1}, "growthcat/rewarded_coins": {"max_validation_faults": 3,
                 "validation_faults": [{"kind": "late_answer", "rate": 0.1, "status": 503, "delay_ms": 50}]}}}
                """#.utf8))
        #expect(scenario.seed == 7 && scenario.networks["mars"]?.faults.first?.retryAfterS == 2)
        let rewarded = scenario.placements["growthcat/rewarded_coins"]
        #expect(rewarded?.maxValidationFaults == 3 && rewarded?.validationFaults.first?.delayMs == 50)
    }
}
