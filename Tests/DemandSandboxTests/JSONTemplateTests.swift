import AdapterKit
import Foundation
import SandboxRouting
import Testing

@testable import GrowthCatSandbox

@Suite("Pre-rendered GrowthCat answers")
struct JSONTemplateTests {
    /// Every placement, with and without its placement object: the template filled with a serial, a token and a price
    /// is byte for byte what the sandbox's encoder writes for the same ad.
    @Test(arguments: [true, false])
    func aRenderedAdIsTheSameBytesAsTheEncodedAd(withPlacement: Bool) throws {
        for placement in GrowthCatRoutes.placements.values {
            let template = JSONTemplate(
                rendering: GrowthCatRoutes.adObject(
                    placement, serial: JSONTemplate.serialHole, token: JSONTemplate.tokenHole,
                    ecpm: .string(JSONTemplate.numberHole),
                    withPlacement: withPlacement, baseURL: "http://127.0.0.1:1"))
            #expect(template.holes.count >= 4, "serial ×3, token, price")
            for (serial, price) in [(7, 2.5), (123_456, 0.01), (1, 1_000_000.0), (42, 3.0)] {
                var rendered = ""
                template.render(serial: serial, token: "tok_0A1B2C3D4E5F", number: price, into: &rendered)
                let expected = SandboxReply.encoded(
                    GrowthCatRoutes.adObject(
                        placement, serial: "\(serial)", token: "tok_0A1B2C3D4E5F", ecpm: .number(price),
                        withPlacement: withPlacement, baseURL: "http://127.0.0.1:1"))
                let parsedRendered = try JSONDecoder().decode(JSONValue.self, from: Data(rendered.utf8))
                let parsedExpected = try JSONDecoder().decode(JSONValue.self, from: expected)
                #expect(parsedRendered == parsedExpected, "\(placement.key) serial \(serial) price \(price)")
                #expect(rendered == String(decoding: expected, as: UTF8.self), "\(placement.key): same bytes")
            }
        }
    }
}
