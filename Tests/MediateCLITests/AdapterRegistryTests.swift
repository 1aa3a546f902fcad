import AdMediationTesting
import AdNetworkConformance
import CurlTransport
import Foundation
import MediateKit
import Testing

@testable import AdMediation
@testable import AdapterKit

/// A network type from outside the built-in adapters: a scripted network that always fills at `ecpm`.
enum EchoFactory: AdNetworkFactory {
    static let type = "echo"
    static let formats: Set<AdFormat.Kind> = [.interstitial]

    /// `ecpm`, a whole number 0…1000.
    struct Settings: AdNetworkSettings {
        var ecpm: Int?
        enum Key: String, CodingKey, CaseIterable { case ecpm }
        init(from decoder: any Decoder) throws {
            ecpm = try decoder.container(keyedBy: Key.self).decodeWholeSetting(forKey: .ecpm, in: 0...1000)
        }
    }

    static func make(_ network: NetworkConfiguration<Settings>, context: AdNetworkFactoryContext) throws(AdError)
        -> BuiltNetwork
    {
        BuiltNetwork(
            ScriptedAdNetwork(
                id: network.id, formats: formats, clock: context.clock,
                fallback: .fill(ecpm: Double(network.settings.ecpm ?? 1))))
    }
}

/// The configuration file knows networks only through their factories: a new type is one entry in the list.
@Suite("Adapter registry", .timeLimit(.minutes(1)))
struct AdapterRegistryTests {
    static let file = Data(
        """
        {"networks": {"e": {"type": "echo", "base_url": "http://127.0.0.1:9", "ecpm": 7}},
         "placements": {"p": {"format": "interstitial", "lines": [{"network": "e", "placement": "x"}]}}}
        """.utf8)

    @Test func aRegisteredFactoryIsReadCheckedAndBuiltFromTheFile() async throws {
        let configuration = try CLIConfiguration.parse(
            Self.file, factories: CLIConfiguration.factories + [EchoFactory.self])
        let http = CurlHTTPClient()
        let networks = try configuration.makeNetworks(http: http)
        let mediator = try Mediator(networks: networks.values.map(\.network), configuration: configuration.mediation)
        let ad = try #require(try await mediator.load(AdRequest(placement: "p", format: .interstitial)).ad)
        #expect(ad.networkID == "e" && ad.ecpm == 7)
        #expect(CLIConfiguration.services(of: networks).isEmpty, "the echo network runs nothing in the background")
        await http.shutdown()
    }

    @Test func everyBuiltInNetworkCarriesItsBackgroundWorkByItsType() async throws {
        let queue = FileManager.default.temporaryDirectory.appendingPathComponent(
            "registry-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: queue) }
        let base = "http://127.0.0.1:9"
        let file = Data(
            """
            {"networks": {
              "ao": {"type": "appopen", "base_url": "\(base)/ao"},
              "cb": {"type": "chartboost", "base_url": "\(base)/cb", "app_id": "a", "app_signature": "s"},
              "gc": {"type": "growthcat", "base_url": "\(base)/gc", "api_key": "k", "queue_path": "\(queue.path)"},
              "mars": {"type": "mars", "base_url": "\(base)/mars"},
              "rtb": {"type": "openrtb", "base_url": "\(base)/rtb"}},
             "placements": {"p": {"format": "interstitial", "lines": [{"network": "gc", "placement": "x"}]}}}
            """.utf8)
        let http = CurlHTTPClient()
        let built = try CLIConfiguration.parse(file).makeNetworks(http: http)
        #expect(built.count == 5)
        // Each built-in network works in the background (tracking, notices, callbacks, its event queue), so each
        // carries its work, and the CLI runs each as a service; none is found by a cast.
        #expect(built.filter { $0.value.backgroundWork == nil }.keys.sorted() == [])
        #expect(CLIConfiguration.services(of: built).count == 5)
        for work in built.values.compactMap(\.backgroundWork) { await work.shutdown() }
        await http.shutdown()
    }

    @Test func anUnregisteredTypeIsRefusedListingTheKnownOnes() {
        #expect(
            throws: AdError(
                .configuration,
                #"networks.e.type: unknown type "echo" (one of growthcat, mars, chartboost, appopen, openrtb)"#)
        ) {
            try CLIConfiguration.parse(Self.file)
        }
    }

    /// An echo network and a `tile` placement: `tile` is MARS's format, declared by `MarsFactory.formats` only.
    static let tileFile = Data(
        (#"{"networks": {"e": {"type": "echo", "base_url": "http://h"}}, "placements": {"p": {"format": "tile", "#
            + #""lines": [{"network": "e", "placement": "x"}]}}}"#).utf8)

    @Test func aFormatNoRegisteredFactoryDeclaresIsRefusedListingTheKnownOnes() {
        #expect(
            throws: AdError(
                .configuration,
                #"placements.p.format: unknown format "tile" (expected one of banner, interstitial, rewarded, "#
                    + "app_open, native)")
        ) {
            try CLIConfiguration.parse(Self.tileFile, factories: [EchoFactory.self])
        }
    }

    @Test func aFormatIsKnownThroughTheFactoryThatDeclaresIt() {
        // With MARS's factory registered, `tile` is a format: what is left is that the echo network does not serve it.
        #expect(
            throws: AdError(.configuration, #"placements.p.lines[0].network: network "e" does not serve format "tile""#)
        ) {
            try CLIConfiguration.parse(Self.tileFile, factories: CLIConfiguration.factories + [EchoFactory.self])
        }
    }

    @Test func aSettingTheFactoryDoesNotKnowIsRefusedNamingIt() {
        let file = Data(
            #"{"networks": {"e": {"type": "echo", "base_url": "http://h", "ecpn": 7}}, "placements": {}}"#.utf8)
        #expect(
            throws: AdError(.configuration, #"networks.e.ecpn: unknown key for type echo; did you mean "ecpm"?"#)
        ) {
            try CLIConfiguration.parse(file, factories: [EchoFactory.self])
        }
    }

    @Test func theFactoryChecksItsOwnSettings() {
        let file = Data(
            #"{"networks": {"e": {"type": "echo", "base_url": "http://h", "ecpm": 1e9}}, "placements": {}}"#.utf8)
        do {
            _ = try CLIConfiguration.parse(file, factories: [EchoFactory.self])
            Issue.record("an ecpm of 1e9 must be refused")
        } catch {
            #expect(error.message.hasPrefix("networks.e.ecpm: must be a whole number 0…1000"), "\(error.message)")
        }
    }
}
