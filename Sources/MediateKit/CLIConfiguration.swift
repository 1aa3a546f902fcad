import AdMediation
import AdMediationServices
import AdTransport
import AdapterKit
import BuiltInNetworks
import CurlTransport
import Foundation
import GrowthCatAds
import MediationFileFormat
import ServiceLifecycle

/// Every problem a configuration file's reading found (``CLIConfiguration/check(_:factories:)``), for the CLI, which
/// does not import the file format's module itself.
package typealias ConfigurationProblems = MediationFileFormat.ConfigurationProblems

/// The CLI's configuration file: named networks and mediated placements (see docs/CONFIG.md). Every network type comes
/// from an adapter's ``AdNetworkFactory`` in ``factories``: this file has no code of its own per network.
package struct CLIConfiguration: Sendable {
    /// The network types `mediate` knows: the registry of built-in networks (`BuiltInNetworks`).
    package static let factories: [any AdNetworkFactory.Type] = BuiltInNetworks.factories

    /// The formats networks of `type` serve (none for an unknown type).
    package static func formats(of type: String, in factories: [any AdNetworkFactory.Type] = factories) -> Set<
        AdFormat.Kind
    > {
        guard let factory = factory(type, in: factories) else { return [] }
        return factory.formats
    }

    /// The factory of `type` in `factories`.
    package static func factory(_ type: String, in factories: [any AdNetworkFactory.Type] = factories) -> (
        any AdNetworkFactory.Type
    )? {
        factories.first { $0.type == type }
    }

    /// The configured networks, by id: each with its type's typed settings, ready to build.
    package var networks: [String: ConfiguredNetwork]
    /// The placements and the breaker.
    package var mediation: MediationConfiguration
    /// The factories this file was read with.
    package var factories: [any AdNetworkFactory.Type]

    /// Creates a configuration.
    package init(
        networks: [String: ConfiguredNetwork], mediation: MediationConfiguration,
        factories: [any AdNetworkFactory.Type] = Self.factories
    ) {
        self.networks = networks
        self.mediation = mediation
        self.factories = factories
    }

    /// Each network's `tcf_vendor_id`, by network id (networks without one are absent).
    package var tcfVendorIDs: [String: Int] { networks.compactMapValues(\.tcfVendorID) }

    /// How the mediator and the privacy gate enforce consent for this file: its networks' TCF vendor ids.
    package var privacy: PrivacyConfiguration { PrivacyConfiguration(tcfVendorIDs: tcfVendorIDs) }

    /// `built` networks behind the privacy gate of this file (``PrivacyGatedNetwork``), by id: what every path that
    /// asks one network alone calls, so none can skip the rules. `signals` win over each request's own (the CLI's
    /// privacy options).
    package func gated(_ built: [String: any AdNetwork], signals: PrivacySignals? = nil) -> [String: any AdNetwork] {
        let privacy = self.privacy
        return built.mapValues { PrivacyGatedNetwork($0, configuration: privacy, signals: signals) }
    }

    /// The largest configuration file read (1 MiB), as `parse` bounds it.
    package static let maxFileBytes = 1 << 20

    /// Reads the file at `path`, at most ``maxFileBytes`` + 1 bytes: a larger file (or an endless one such as
    /// `/dev/zero`) is refused after that many bytes, never read into memory whole (issue 31 item 8).
    package static func read(path: String) throws(AdError) -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw AdError(.configuration, "--config: cannot read \(path)")
        }
        defer { try? handle.close() }
        var data = Data()
        do {
            // read(upToCount:) may return less than asked before the end of the file: loop until EOF or the cap.
            while data.count <= maxFileBytes {
                guard let chunk = try handle.read(upToCount: maxFileBytes + 1 - data.count), !chunk.isEmpty else {
                    break
                }
                data.append(chunk)
            }
        } catch {
            throw AdError(.configuration, "--config: cannot read \(path): \(error.localizedDescription)")
        }
        guard data.count <= maxFileBytes else {
            throw AdError(.configuration, "--config: \(path) is larger than the limit of \(maxFileBytes) bytes")
        }
        return data
    }

    /// Reads and checks a configuration file, decoding it once (``FileForm``): bounded JSON, each network's type, base
    /// URL and typed settings (its factory's `Settings`), then the placements against the networks' formats. Errors
    /// name the field; an unknown key names the nearest valid one. Every problem found is in the error's message, one
    /// per line (``check(_:factories:)``).
    package static func parse(_ data: Data, factories: [any AdNetworkFactory.Type] = factories) throws(AdError)
        -> CLIConfiguration
    {
        do throws(ConfigurationProblems) {
            return try check(data, factories: factories)
        } catch {
            throw error.error
        }
    }

    /// ``parse(_:factories:)`` with every problem of the file listed, not only the first (issue 47): each problem
    /// found while decoding (every network and its settings, placement, line and field is read even after one
    /// failed), else, once the file reads, every problem against the networks
    /// (``MediationConfiguration/problems(networks:)``: every placement, line, bidder and arm) together with what
    /// `upFront` finds in the configuration (the host policy, banner sizes, a command's arms): one listing, so one
    /// pass over the file fixes it. A file that is not JSON, or not an object, is one problem (with its line and
    /// column).
    package static func check(
        _ data: Data, factories: [any AdNetworkFactory.Type] = factories,
        upFront: (CLIConfiguration) -> [String] = { _ in [] }
    ) throws(ConfigurationProblems) -> CLIConfiguration {
        if let violation = JSONLimits(maxBytes: maxFileBytes, maxDepth: 16, maxStringBytes: 16 << 10, maxItems: 1000)
            .violation(in: data)
        {
            throw ConfigurationProblems(["configuration: \(violation)"])
        }
        let decoder = JSONDecoder()
        if let key = FileForm.factoriesKey { decoder.userInfo[key] = FileForm.Factories(list: factories) }
        let file: FileForm
        do {
            file = try ProblemCollector.decode(FileForm.self, from: data, with: decoder)
        } catch let problems as ConfigurationProblems {
            throw problems
        } catch let error as DecodingError {
            // At the root: unreadable JSON, or not an object.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                // Not JSON at all: where it stops being JSON (a truncated file, a stray comma), by line and column.
                if let syntax = JSONSyntax.firstError(in: Array(data)) {
                    throw ConfigurationProblems(["configuration: not valid JSON at \(syntax.description)"])
                }
                throw ConfigurationProblems(["configuration: not a JSON object"])
            }
            throw ConfigurationProblems([ConfigurationPath.describe(error)])
        } catch {
            throw ConfigurationProblems(["configuration: \(error)"])
        }
        var formats: [String: Set<AdFormat.Kind>] = [:]
        for (id, network) in file.networks { formats[id] = network.factory.formats }
        let configuration = CLIConfiguration(networks: file.networks, mediation: file.mediation, factories: factories)
        // Every problem against the networks (each placement's, line's, bidder's and arm's, not a first one each),
        // then the up-front checks, in one listing.
        let problems = file.mediation.problems(networks: formats) + upFront(configuration)
        if !problems.isEmpty { throw ConfigurationProblems(problems) }
        return configuration
    }

    /// The per-user state directory of `mediate`: `$XDG_STATE_HOME/mediate`, else `~/.local/state/mediate`.
    package static func stateDirectory(environment: [String: String]) -> URL? {
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("mediate")
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".local/state/mediate")
    }

    /// The default event queue of a GrowthCat network: `<state directory>/<network id>-<hash>-events.sqlite`
    /// (created; the hash is of the exact id, base URL and API key).
    package static func defaultQueuePath(
        networkID: String, baseURL: String = "", apiKey: String = "", environment: [String: String]
    ) throws(AdError) -> String {
        try GrowthCatFactory.defaultQueuePath(
            networkID: networkID, baseURL: baseURL, apiKey: apiKey,
            stateDirectory: stateDirectory(environment: environment))
    }

    /// The background work of the built networks (a GrowthCat client's delivery, a bidder's notices), as each
    /// network's type declares it (``BuiltNetwork/backgroundWork``), in id order: the services to run beside the HTTP
    /// client (see ``withServices(_:logger:_:)``).
    package static func services(of built: [String: BuiltNetwork]) -> [any Service] {
        built.sorted { $0.key < $1.key }.compactMap { $0.value.backgroundWork.map(BackgroundWorkService.init) }
    }

    /// Builds every configured network with its factory.
    package func makeNetworks(
        http: any HTTPClient,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        clock: any AdClock = SystemAdClock()
    ) throws(AdError) -> [String: BuiltNetwork] {
        let context = AdNetworkFactoryContext(
            http: http, clock: clock, stateDirectory: Self.stateDirectory(environment: environment))
        var built: [String: BuiltNetwork] = [:]
        for (id, network) in networks {
            built[id] = try network.make(context: context)
        }
        return built
    }
}

extension CLIConfiguration {
    /// Every problem a request would meet later, found before any is sent (issue 47 item 5), each naming its field:
    /// a base URL of plain http to a host that is not loopback (plain http is for local servers; anything else
    /// uses https), and a banner placement whose line's network does not serve its size. Empty when there is none.
    package var problems: [String] {
        var problems: [String] = []
        for id in networks.keys.sorted() {
            guard let network = networks[id], let base = try? URLDestination(parsing: network.baseURL) else { continue }
            if base.scheme == "http", base.destinationClass != .loopback {
                problems.append(
                    "networks.\(id).base_url: plain http to \(base.host), not a loopback host: use https (plain http "
                        + "is for local servers only)")
            }
        }
        for id in mediation.placements.keys.sorted() {
            guard let placement = mediation.placements[id], case .banner(let size) = placement.format else { continue }
            for (index, line) in placement.lines.enumerated() {
                guard let type = networks[line.network]?.type,
                    let sizes = Self.factory(type, in: factories)?.bannerSizes, !sizes.contains(size)
                else { continue }
                problems.append(
                    "placements.\(id).lines[\(index)]: network \(line.network) (\(type)) serves banners of "
                        + "\(sizes.map(\.description).joined(separator: ", ")) only, not \(size)")
            }
        }
        return problems
    }
}
