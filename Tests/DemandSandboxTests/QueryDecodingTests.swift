import Foundation
import Testing

@testable import DemandSandbox

@Suite("Sandbox query decoding")
struct QueryDecodingTests {
    @Test func decodesPlusAndPercentEscapesAsFoundationDoes() {
        for part in ["a+b", "caf%C3%A9", "%2Fpath%3Fx%3D1", "plain", "", "%41%62", "sp%20ace+plus"] {
            let foundation = part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? part
            #expect(SandboxState.formDecode(Substring(part)) == foundation, "\(part)")
        }
    }

    @Test func keepsAPartWithAMalformedEscapeOrInvalidUTF8AsSent() {
        for part in ["100%", "%zz", "%4", "a%FFb", "x+%"] {
            #expect(SandboxState.formDecode(Substring(part)) == part, "\(part)")
        }
    }

    @Test func splitsPairsAndDecodesKeysAndValues() {
        let items = SandboxState.decodeQuery("placement_key=home+banner&gdpr=1&flag&k%3D=v%26")
        #expect(items == ["placement_key": "home banner", "gdpr": "1", "flag": "", "k=": "v&"])
    }
}
