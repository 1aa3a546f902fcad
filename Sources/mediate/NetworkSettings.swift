import Foundation

/// One network of a configuration file as plain settings, whatever its type: each key, and each value that is a
/// string. What `list` names (keys only, never values) and `load --bodies` redacts (the values). Read apart from the
/// typed configuration, which keeps no setting it does not know by name.
struct NetworkSettings: Decodable, Sendable {
    /// Every key of the network's object, sorted.
    var keys: [String]
    /// The keys whose value is a string, with the value.
    var strings: [String: String]

    /// Any key of an object.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { return nil }
    }

    /// The file's top level: only `networks` is read.
    struct File: Decodable {
        var networks: [String: NetworkSettings]

        enum CodingKeys: String, CodingKey {
            case networks
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        keys = container.allKeys.map(\.stringValue).sorted()
        var strings: [String: String] = [:]
        for key in container.allKeys {
            if let value = try? container.decode(String.self, forKey: key) { strings[key.stringValue] = value }
        }
        self.strings = strings
    }

    /// The networks of a configuration file's JSON by id; empty when it has none (or is not such a file).
    static func read(_ data: Data) -> [String: NetworkSettings] {
        (try? JSONDecoder().decode(File.self, from: data))?.networks ?? [:]
    }
}
