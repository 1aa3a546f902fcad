import AdMediation
import AdapterKit
import Foundation
import MediationFileFormat

/// One network of the configuration file, read and checked: its id, type, base URL, and its factory's typed
/// settings, ready to build.
package struct ConfiguredNetwork: Sendable {
    /// The network's id (its key under `networks`).
    package let id: String
    /// Its `type`.
    package let type: String
    /// Its `base_url`.
    package let baseURL: String
    /// The factory of its type.
    package let factory: any AdNetworkFactory.Type
    /// Its `tcf_vendor_id`, the network's IAB Global Vendor List id (nil: not declared).
    package let tcfVendorID: Int?
    private let build: @Sendable (AdNetworkFactoryContext) throws(AdError) -> BuiltNetwork

    /// A network of `factory`'s type with its typed settings and its TCF vendor id, if declared.
    package init<Factory: AdNetworkFactory>(
        _ factory: Factory.Type, _ network: NetworkConfiguration<Factory.Settings>, tcfVendorID: Int? = nil
    ) {
        id = network.id
        type = Factory.type
        baseURL = network.baseURL
        self.factory = factory
        self.tcfVendorID = tcfVendorID
        build = { (context) throws(AdError) in try Factory.make(network, context: context) }
    }

    /// Builds the network with its factory (and the background work its type declares).
    package func make(context: AdNetworkFactoryContext) throws(AdError) -> BuiltNetwork { try build(context) }
}

/// The configuration file's form, decoded once (docs/CONFIG.md): `networks` (each read by its type's factory),
/// `placements` and `circuit_breaker`. Any other key is refused, naming the nearest valid one.
struct FileForm: Decodable {
    var networks: [String: ConfiguredNetwork]
    var mediation: MediationConfiguration

    /// The factories to read networks with, handed to the decoder in its `userInfo`. They are also the file's
    /// declared format kinds (each factory's `formats`), so a placement may name MARS's `tile` because `MarsFactory`
    /// declares it.
    struct Factories: Sendable, DeclaredFormatKinds {
        var list: [any AdNetworkFactory.Type]

        var declaredFormatKinds: Set<AdFormat.Kind> { list.reduce(into: []) { $0.formUnion($1.formats) } }
    }

    /// Where ``Factories`` sit in the decoder's `userInfo`: the key the file form reads declared format kinds at.
    static let factoriesKey: CodingUserInfoKey? = PlacementConfiguration.formatKindsKey

    enum CodingKeys: String, CodingKey, CaseIterable {
        case networks, placements
        case circuitBreaker = "circuit_breaker"
    }

    /// Reads the file; when the decoder collects problems (``ProblemCollector``), each network's and each field's is
    /// recorded and reading goes on, so every problem of the file is found in one pass.
    init(from decoder: any Decoder) throws {
        guard (try? decoder.container(keyedBy: ConfigurationKey.self)) != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a JSON object"))
        }
        try decoder.rejectingUnknownKeys(CodingKeys.self)
        let factories =
            Self.factoriesKey.flatMap { decoder.userInfo[$0] as? Factories }?.list ?? CLIConfiguration.factories
        let c = try decoder.container(keyedBy: CodingKeys.self)
        networks = try decoder.recovering([:]) { try Self.readNetworks(c, factories: factories, decoder: decoder) }
        mediation = MediationConfiguration(
            placements: try decoder.recovering([:]) {
                try c.decodeNamed(PlacementConfiguration.self, forKey: .placements, in: decoder)
            },
            circuitBreaker: try decoder.recovering(.init()) {
                try c.decodeIfPresent(CircuitBreakerConfiguration.self, forKey: .circuitBreaker) ?? .init()
            })
    }

    /// `networks`: each read apart (a network with a problem is left out, its problem recorded when collecting).
    private static func readNetworks(
        _ c: KeyedDecodingContainer<CodingKeys>, factories: [any AdNetworkFactory.Type], decoder: any Decoder
    ) throws -> [String: ConfiguredNetwork] {
        let required = DecodingError.dataCorrupted(
            .init(codingPath: [CodingKeys.networks], debugDescription: "required, an object of named networks"))
        guard let object = try? c.nestedContainer(keyedBy: ConfigurationKey.self, forKey: .networks),
            !object.allKeys.isEmpty
        else { throw required }
        var networks: [String: ConfiguredNetwork] = [:]
        for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            let network: ConfiguredNetwork? = try decoder.recovering(nil) {
                try Self.network(id: key.stringValue, from: try object.superDecoder(forKey: key), factories: factories)
            }
            if let network { networks[key.stringValue] = network }
        }
        return networks
    }

    /// `networks.<id>`: its `type` chooses the factory, which reads the rest.
    private static func network(id: String, from decoder: any Decoder, factories: [any AdNetworkFactory.Type]) throws
        -> ConfiguredNetwork?
    {
        guard let object = try? decoder.container(keyedBy: ConfigurationKey.self) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "expected an object"))
        }
        // A closure, not `\.type`: a key path to a static member through an existential metatype crashes this compiler.
        let types = factories.map { $0.type }.joined(separator: ", ")
        let typeKey = ConfigurationKey("type")
        guard let type = try? object.decode(String.self, forKey: typeKey) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath + [typeKey], debugDescription: "required (one of \(types))"))
        }
        guard let factory = factories.first(where: { $0.type == type }) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [typeKey],
                    debugDescription: "unknown type \"\(type.prefix(40))\" (one of \(types))"))
        }
        return try read(factory, id: id, from: decoder)
    }

    /// The network's keys checked against `Factory.Settings.Key` and the keys every network has (`type`, `base_url`,
    /// ``NetworkPrivacySettings``'s), its base URL, its privacy keys, then its settings.
    private static func read<Factory: AdNetworkFactory>(_ factory: Factory.Type, id: String, from decoder: any Decoder)
        throws -> ConfiguredNetwork?
    {
        try decoder.rejectingUnknownKeys(
            allowing: ["type", "base_url"] + NetworkPrivacySettings.CodingKeys.allCases.map(\.stringValue)
                + Factory.Settings.Key.allCases.map(\.stringValue),
            what: "unknown key for type \(Factory.type)")
        let object = try decoder.container(keyedBy: ConfigurationKey.self)
        let baseKey = ConfigurationKey("base_url")
        // Each part read even when one before it failed (when collecting), so its problems are found too.
        let base: String? = try decoder.recovering(nil) {
            guard let base = try? object.decode(String.self, forKey: baseKey), let url = URL(string: base),
                url.scheme != nil, url.host != nil
            else {
                let shown = (try? object.decode(String.self, forKey: baseKey)).map { ", got \"\($0.prefix(64))\"" }
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath + [baseKey],
                        debugDescription: "required, an absolute URL" + (shown ?? "")))
            }
            return base
        }
        let privacy: NetworkPrivacySettings? = try decoder.recovering(nil) { try NetworkPrivacySettings(from: decoder) }
        let settings: Factory.Settings? = try decoder.recovering(nil) { try Factory.Settings(from: decoder) }
        // Nil only when collecting: each problem is recorded, the network left out and the file refused.
        guard let base, let privacy, let settings else { return nil }
        return ConfiguredNetwork(
            factory, NetworkConfiguration(id: id, baseURL: base, settings: settings), tcfVendorID: privacy.tcfVendorID)
    }
}
