import AdMediation
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
    private let build: @Sendable (AdNetworkFactoryContext) throws(AdError) -> any AdNetwork

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

    /// Builds the network with its factory.
    package func make(context: AdNetworkFactoryContext) throws(AdError) -> any AdNetwork { try build(context) }
}

/// The configuration file's form, decoded once (docs/CONFIG.md): `networks` (each read by its type's factory),
/// `placements` and `circuit_breaker`. Any other key is refused, naming the nearest valid one.
struct FileForm: Decodable {
    var networks: [String: ConfiguredNetwork]
    var mediation: MediationConfiguration

    /// The factories to read networks with, handed to the decoder in its `userInfo`.
    struct Factories: Sendable {
        var list: [any AdNetworkFactory.Type]
    }

    /// Where ``Factories`` sit in the decoder's `userInfo`.
    static let factoriesKey: CodingUserInfoKey? = CodingUserInfoKey(rawValue: "mediate.factories")

    enum CodingKeys: String, CodingKey, CaseIterable {
        case networks, placements
        case circuitBreaker = "circuit_breaker"
    }

    init(from decoder: any Decoder) throws {
        guard (try? decoder.container(keyedBy: ConfigurationKey.self)) != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a JSON object"))
        }
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let factories =
            Self.factoriesKey.flatMap { decoder.userInfo[$0] as? Factories }?.list ?? CLIConfiguration.factories
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let required = DecodingError.dataCorrupted(
            .init(codingPath: [CodingKeys.networks], debugDescription: "required, an object of named networks"))
        guard let object = try? c.nestedContainer(keyedBy: ConfigurationKey.self, forKey: .networks),
            !object.allKeys.isEmpty
        else { throw required }
        var networks: [String: ConfiguredNetwork] = [:]
        for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            networks[key.stringValue] = try Self.network(
                id: key.stringValue, from: try object.superDecoder(forKey: key), factories: factories)
        }
        self.networks = networks
        mediation = MediationConfiguration(
            placements: try c.decode([String: PlacementConfiguration].self, forKey: .placements),
            circuitBreaker: try c.decodeIfPresent(CircuitBreakerConfiguration.self, forKey: .circuitBreaker) ?? .init())
    }

    /// `networks.<id>`: its `type` chooses the factory, which reads the rest.
    private static func network(id: String, from decoder: any Decoder, factories: [any AdNetworkFactory.Type]) throws
        -> ConfiguredNetwork
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
        throws -> ConfiguredNetwork
    {
        try decoder.rejectUnknownKeys(
            allowing: ["type", "base_url"] + NetworkPrivacySettings.CodingKeys.allCases.map(\.stringValue)
                + Factory.Settings.Key.allCases.map(\.stringValue),
            what: "unknown key for type \(Factory.type)")
        let object = try decoder.container(keyedBy: ConfigurationKey.self)
        let baseKey = ConfigurationKey("base_url")
        guard let base = try? object.decode(String.self, forKey: baseKey), let url = URL(string: base),
            url.scheme != nil, url.host != nil
        else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath + [baseKey], debugDescription: "required, an absolute URL"))
        }
        let privacy = try NetworkPrivacySettings(from: decoder)
        let settings = try Factory.Settings(from: decoder)
        return ConfiguredNetwork(
            factory, NetworkConfiguration(id: id, baseURL: base, settings: settings), tcfVendorID: privacy.tcfVendorID)
    }
}
