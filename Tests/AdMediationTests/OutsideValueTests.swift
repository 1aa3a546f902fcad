import AdMediation
import AdTransport
import Foundation
import Testing

@Suite("Checked conversions of outside values", .timeLimit(.minutes(2)))
struct OutsideValueTests {
    @Test(
        arguments: [
            (1e308, OutsideValue.maximumDuration), (Double(Int64.max), OutsideValue.maximumDuration),
            (604_800.5, OutsideValue.maximumDuration), (0.0, Duration.zero), (1.5, Duration.milliseconds(1500)),
            (0.0000000004, Duration.zero),
        ] as [(Double, Duration)])
    func secondsInRangeBecomeADurationAndHugeValuesClampToSevenDays(seconds: Double, expected: Duration) {
        #expect(OutsideValue.duration(seconds: seconds) == expected)
    }

    @Test(arguments: [-1e308, -1, -0.001, Double.nan, Double.infinity, -Double.infinity])
    func negativeAndNonFiniteSecondsAreNotADuration(seconds: Double) {
        #expect(OutsideValue.duration(seconds: seconds) == nil)
    }

    @Test func wholeSecondsClampAndRejectNegatives() {
        #expect(OutsideValue.duration(seconds: Int64.max) == OutsideValue.maximumDuration)
        #expect(OutsideValue.duration(seconds: Int64(-1)) == nil)
        #expect(OutsideValue.wholeSeconds(1e308) == 604_800)
        #expect(OutsideValue.wholeSeconds(12.9) == 12)
        #expect(OutsideValue.wholeSeconds(-3) == nil)
    }

    @Test func integersMustBeIntegralAndInRange() {
        #expect(OutsideValue.integer(12.0, in: 0...100) == 12)
        #expect(OutsideValue.integer(12.5, in: 0...100) == nil)
        #expect(OutsideValue.integer(1e308, in: 0...Int.max) == nil)
        #expect(OutsideValue.integer(Double(Int64.max), in: 0...Int.max) == nil, "2^63 is one past Int64.max")
        #expect(OutsideValue.integer(-1.0, in: 0...100) == nil)
        #expect(OutsideValue.integer("42", in: 0...100) == 42)
        #expect(OutsideValue.integer("9223372036854775808", in: 0...Int.max) == nil)
        #expect(OutsideValue.integer("", in: 0...100) == nil)
    }

    @Test func jsonValuesAreReadByTheirJSONType() throws {
        let object = try #require(
            try JSONSerialization.jsonObject(
                with: Data(#"{"n": 3, "t": true, "s": "12", "z": null, "big": 1e308}"#.utf8)) as? [String: Any])
        #expect(OutsideValue.number(object["n"]) == 3)
        #expect(OutsideValue.number(object["t"]) == nil, "a boolean is not a number")
        #expect(OutsideValue.number(object["s"]) == nil, "a string is not a number")
        #expect(OutsideValue.number(object["z"]) == nil)
        #expect(OutsideValue.number(object["big"]) == 1e308)
        #expect(OutsideValue.bool(object["t"]) == true)
        #expect(OutsideValue.bool(object["n"]) == nil, "a number is not a boolean")
    }
}

@Suite("Bounded JSON", .timeLimit(.minutes(2)))
struct JSONLimitsTests {
    @Test func aBodyNested100000LevelsDeepIsRefusedNamingTheLimit() {
        let body = Data((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        #expect(JSONLimits().violation(in: body) == "nesting deeper than 32 levels")
    }

    @Test func aOneMebibyteStringIsRefusedNamingTheLimit() {
        let body = Data(#"{"a": ""#.utf8 + Data(repeating: UInt8(ascii: "x"), count: 1 << 20) + Data(#""}"#.utf8))
        #expect(JSONLimits().violation(in: body) == "a string of 1048576 bytes is over the limit of 262144 bytes")
    }

    @Test func aFiftyThousandItemArrayIsRefusedNamingTheLimit() {
        let body = Data(("[" + Array(repeating: "1", count: 50_000).joined(separator: ",") + "]").utf8)
        #expect(JSONLimits().violation(in: body) == "more than 10000 items in one array or object")
    }

    @Test func aBodyOverTheSizeLimitIsRefused() {
        let limits = JSONLimits(maxBytes: 10, maxDepth: 4, maxStringBytes: 4, maxItems: 4)
        #expect(
            limits.violation(in: Data("[1,2,3,4,5,6,7]".utf8)) == "a body of 15 bytes is over the limit of 10 bytes")
    }

    @Test func bracketsAndQuotesInsideStringsDoNotCount() {
        let limits = JSONLimits(maxBytes: 1000, maxDepth: 2, maxStringBytes: 100, maxItems: 3)
        #expect(limits.violation(in: Data(#"{"a": "[[[[,,,,\"{{{{"}"#.utf8)) == nil)
        #expect(limits.violation(in: Data(#"[[[1]]]"#.utf8)) == "nesting deeper than 2 levels")
        #expect(limits.violation(in: Data(#"[1,2,3]"#.utf8)) == nil)
        #expect(limits.violation(in: Data(#"[1,2,3,4]"#.utf8)) == "more than 3 items in one array or object")
    }

    @Test func checkThrowsInvalidResponseNamingTheBody() {
        let body = Data(String(repeating: "[", count: 40).utf8)
        #expect(throws: AdError(.invalidResponse, "the answer: nesting deeper than 32 levels")) {
            try JSONLimits().check(body, "the answer")
        }
    }
}

@Suite("Retry-After from outside", .timeLimit(.minutes(2)))
struct RetryAfterTests {
    @Test(arguments: [
        ("2", Duration.seconds(2)), (" 0 ", Duration.zero), ("99999999999999999999999", OutsideValue.maximumDuration),
        ("9223372036854775807", OutsideValue.maximumDuration), ("604801", OutsideValue.maximumDuration),
    ])
    func delaySecondsAreReadAndClampedToSevenDays(header: String, expected: Duration) {
        #expect(HTTPResponse(status: 429, headers: ["Retry-After": header]).retryAfter == expected)
    }

    @Test(arguments: ["-1", "1e308", "1.5", "", "abc", "Wed, 21 Oct 2015 07:28:00 GMT", "NaN"])
    func anythingButDelaySecondsIsNoRetryAfter(header: String) {
        #expect(HTTPResponse(status: 429, headers: ["Retry-After": header]).retryAfter == nil)
    }
}
