import AdMediation
import AdNetworkConformance
import CurlTransport
import Foundation
import MediateKit
import Testing

@Suite("mediate configuration file under hostile input")
struct ConfigurationFileTests {
    static let valid = """
    {"networks": {"m": {"type": "mars", "base_url": "https://mars.example/v1/", "cache_path": "PATH", "cache_ttl_s": 300, "cache_max_mib": 10}},
     "placements": {"t": {"format": "tile", "lines": [{"network": "m", "placement": "tile_1"}]}}}
    """

    /// Parses and builds the networks (where the cache settings are read); the error message, or nil.
    func problem(_ data: Data) async -> String? {
        let http = CurlHTTPClient()
        defer { Task { await http.shutdown() } }
        do {
            let configuration = try CLIConfiguration.parse(data)
            _ = try configuration.makeNetworks(http: http)
            return nil
        } catch {
            return error.message
        }
    }

    func valid() -> String {
        Self.valid.replacingOccurrences(of: "PATH", with: FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID().uuidString).sqlite").path)
    }

    @Test(arguments: ["cache_ttl_s", "cache_max_mib"], HostileJSON.numeric)
    func aCacheSettingOutOfRangeIsAnErrorNamingTheField(field: String, value: HostileJSON.Value) async throws {
        let body = try #require(HostileJSON.replacing(["networks", "m", field], in: valid(), with: value))
        let message = await problem(body)
        switch value.name {
        case "wrong_type":
            #expect(message == nil, "a number written as a string is a valid setting (settings are strings or numbers)")
        case "boolean", "null":
            // Not a string or a number: refused when the file is read.
            #expect(message == "networks.m.\(field): expected a string or a number", "\(value)")
        default:
            #expect(message?.hasPrefix("networks.m.\(field): must be a whole number") == true, "\(value): \(message ?? "accepted")")
        }
    }

    @Test func aValidFileBuildsItsNetworks() async {
        #expect(await problem(Data(valid().utf8)) == nil)
    }

    @Test func aFileNestedTooDeeplyIsRefusedNamingTheLimit() async {
        let body = Data(("{\"networks\": " + String(repeating: "[", count: 100_000)).utf8)
        #expect(await problem(body) == "configuration: nesting deeper than 16 levels")
    }
}
