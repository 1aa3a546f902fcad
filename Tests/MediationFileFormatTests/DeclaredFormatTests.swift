import AdMediation
import Foundation
import MediationFileFormat
import Testing

extension AdFormat.Kind {
    /// A network's own kind, declared here as a network module declares one (MARS's `tile`).
    static let tile = AdFormat.Kind(rawValue: "tile")
}

/// A placement's `format` is one of the core's kinds or one the caller declares (an adapter's), never any name.
@Suite("Declared format kinds", .timeLimit(.minutes(2)))
struct DeclaredFormatTests {
    static func placement(_ format: String) -> Data {
        Data(#"{"placements": {"p": {"format": "\#(format)", "lines": [{"network": "n", "placement": "a"}]}}}"#.utf8)
    }

    @Test("a network's own format not declared is refused, naming the core's formats")
    func undeclaredKindIsRefusedNamingTheKnownOnes() {
        #expect(
            throws: AdError(
                .configuration,
                #"placements.p.format: unknown format "tile" (expected one of banner, interstitial, rewarded, "#
                    + "app_open, native)")
        ) { try MediationConfiguration.decode(json: Self.placement("tile")) }
    }

    @Test("a declared format is read as that kind")
    func declaredKindIsRead() throws {
        let configuration = try MediationConfiguration.decode(json: Self.placement("tile"), formats: [.tile])
        #expect(configuration.placements["p"]?.format == .unsized(.tile))
    }

    @Test("an unknown format's error lists the declared formats after the core's")
    func unknownKindErrorListsTheDeclaredOnes() {
        #expect(
            throws: AdError(
                .configuration,
                #"placements.p.format: unknown format "poster" (expected one of banner, interstitial, rewarded, "#
                    + "app_open, native, tile)")
        ) { try MediationConfiguration.decode(json: Self.placement("poster"), formats: [.tile]) }
    }

    @Test("a declared format's placement encodes to its name")
    func declaredKindEncodesToItsName() throws {
        let configuration = try MediationConfiguration.decode(json: Self.placement("tile"), formats: [.tile])
        let text = String(decoding: try JSONEncoder().encode(configuration), as: UTF8.self)
        #expect(text.contains(#""format":"tile""#))
    }
}
