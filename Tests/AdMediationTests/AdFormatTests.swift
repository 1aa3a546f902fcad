import AdMediation
import Foundation
import Testing

/// `AdFormat` is a banner of a size or a sizeless kind from an open set (`AdFormat.Kind`).
@Suite("Ad formats")
struct AdFormatTests {
    @Test("a name outside the core's is read as a kind of that name")
    func aNetworksOwnNameIsItsKind() {
        #expect(AdFormat(name: "tile") == .tile)
    }

    @Test("appOpen is read as the app_open kind")
    func appOpenIsReadAsItsWireName() {
        #expect(AdFormat(name: "appOpen") == .appOpen)
    }

    @Test("a banner named without a size is no format")
    func aBannerWithoutASizeIsNoFormat() {
        #expect(AdFormat(name: "banner") == nil)
    }

    @Test("a kind encodes as its wire name")
    func aKindEncodesAsItsWireName() throws {
        #expect(String(decoding: try JSONEncoder().encode(AdFormat.Kind.appOpen), as: UTF8.self) == #""app_open""#)
    }

    @Test("a sizeless banner placement is refused at its size")
    func aSizelessBannerPlacementIsRefused() {
        let configuration = MediationConfiguration(
            placements: [
                "p": PlacementConfiguration(
                    format: .unsized(.banner), lines: [WaterfallLine(network: "n", placement: "a")])
            ])
        #expect(
            configuration.problems(networks: ["n": [.banner]])
                == [#"placements.p.size: a banner placement needs a size such as "320x50""#])
    }
}
