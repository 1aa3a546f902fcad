import AdMediationTesting
import AdPrivacy
import AdTransport
import AdapterKit
import BuiltInNetworks
import DemandSandbox
import Foundation
import Logging
import MediateKit
import MediationFileFormat
import ObliviousHTTP

// libFuzzer targets for every decoder of outside input. Built by `make fuzz` (ADMEDIATION_FUZZ=1), the binary runs
// libFuzzer on the target named by FUZZ_TARGET; in a normal build it replays files: `fuzz-decoders TARGET FILE…`.
// The parsers are the library's own (`package` access), reached with `@testable import` as tests reach them: this
// target is built in debug only, where SwiftPM compiles the library for testing.
@testable import AdMediation
@testable import AppOpenAds
@testable import ChartboostBanners
@testable import GrowthCatAds
@testable import MARSAds
@testable import OpenRTBBidder

/// An HTTP client that is never called: the adapters' parsers are fed bodies directly.
struct NoHTTPClient: HTTPClient {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        throw HTTPClientError(.other, "not used by the fuzzer")
    }
}

/// An HTTP client that answers every request with the fuzzer's input (status 200, JSON).
struct ReplayHTTPClient: HTTPClient {
    let body: Data

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: body)
    }
}

/// A clock whose sleeps end at once, moving its time to their deadline: back-offs and expiries run without waiting.
final class InstantClock: AdClock {
    private let instant = LockedValue(AdInstant.zero)

    var now: AdInstant { instant.withLock { $0 } }

    func sleep(until deadline: AdInstant) async throws {
        try Task.checkCancellation()
        instant.withLock { $0 = max($0, deadline) }
    }
}

/// One target per network of the registry of built-in networks that has a sample line, `answer-<type>`: the network
/// is built by its factory from the sample's settings, over a client that answers every request with the input, and
/// loads the sample's placement (an ad it returns is invalidated, its background work ended). A network added to the
/// registry is fuzzed with no line here; `make fuzz` lists the targets from this binary.
enum RegistryTargets {
    static let all: [String: @Sendable (Data) -> Void] = Dictionary(
        uniqueKeysWithValues: BuiltInNetworks.samples.map { entry in
            ("answer-" + entry.factory.type, { @Sendable data in load(entry, answering: data) })
        })

    static func load(_ entry: BuiltInNetwork, answering body: Data) {
        guard let format = entry.sampleFormat, let placement = entry.sample?.placement else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let done = DispatchSemaphore(value: 0)
        // The fuzzer's thread waits; the load runs on the cooperative pool.
        Task {
            defer { done.signal() }
            let context = AdNetworkFactoryContext(
                http: ReplayHTTPClient(body: body), clock: InstantClock(), stateDirectory: directory)
            guard
                let built = try? entry.makeSample(
                    id: entry.factory.type, baseURL: entry.sampleBaseURL(rootURL: "https://fuzz.example"),
                    context: context)
            else { return }
            if let ad = (try? await built.network.load(AdRequest(placement: placement, format: format)))?.ad {
                ad.invalidate()
            }
            await built.backgroundWork?.shutdown()
        }
        done.wait()
    }
}

/// Every decoder, by target name. Each must return (never trap) whatever the bytes are.
enum Targets {
    static let chartboost = ChartboostNetwork(
        configuration: .init(baseURL: "https://cb.example", appID: "a", appSignature: "s"), http: NoHTTPClient(),
        clock: ManualAdClock())
    static let bidder: BiddingNetwork = {
        var configuration = BiddingNetwork.Configuration(baseURL: "https://rtb.example")
        configuration.noticeAttempts = 1  // notices fail at once on NoHTTPClient, never wait for a retry
        return BiddingNetwork(configuration: configuration, http: NoHTTPClient(), clock: ManualAdClock())
    }()
    static let appOpen = AppOpenNetwork(
        configuration: .init(baseURL: "https://ao.example"), http: NoHTTPClient(), clock: ManualAdClock())

    /// The decoders' own targets and the registry's (``RegistryTargets``).
    static let all: [String: @Sendable (Data) -> Void] = decoders.merging(RegistryTargets.all) { first, _ in first }

    static let decoders: [String: @Sendable (Data) -> Void] = [
        "growthcat-config": { _ = try? GrowthCatClient.parseBootstrap($0) },
        "growthcat-catalog": { data in
            // Catalog and serve answers share a shape; the presentation rules then run over a week of time.
            guard let (ads, _) = try? GrowthCatClient.parseCatalog(data) else { return }
            for ad in ads {
                var (session, _) = GrowthCatPresentation.present(ad, at: .zero)
                for second in [1, 15, 30, 3600, 604_800, 1_000_000] {
                    _ = session.advance(to: .zero + .seconds(second))
                }
                _ = session.close(at: .zero + .seconds(604_801))
            }
        },
        "growthcat-events": { _ = try? GrowthCatClient.parseEventsAnswer($0) },
        "growthcat-reward": { _ = try? GrowthCatClient.parseRewardAnswer($0) },
        "mars-ads": { data in
            guard
                let items = try? MozAdsClient.parseAnswer(HTTPResponse(status: 200, body: data), onInvalid: { _, _ in })
            else { return }
            for kind in MozAdsClient.Kind.allCases {
                let selected = MozAdsClient.select(items, kind: kind, hash: "h", onInvalid: { _, _ in })
                for item in selected.values.joined() {
                    _ = MozAdsClient.tile(item)
                    _ = MozAdsClient.image(item)
                    _ = MozAdsClient.spoc(item)
                }
            }
        },
        "chartboost-load": { data in
            for size in [BannerSize.standard, .medium, .leaderboard] {
                _ = try? chartboost.parse(data, request: AdRequest(placement: "p", format: .banner(size)), size: size)
            }
        },
        "openrtb-bid": { data in
            for format in [AdFormat.banner(.standard), .interstitial, .rewarded] {
                var request = AdRequest(placement: "p", format: format)
                request.floorEcpm = 1
                if let ad = (try? bidder.parse(data, auctionID: "auction-1", request: request))?.ad {
                    ad.settleAuction(.won(clearingPrice: ad.ecpm ?? 0))
                    ad.invalidate()
                }
            }
        },
        "appopen-load": { _ = try? appOpen.parse($0, request: AdRequest(placement: "p", format: .appOpen)) },
        "mediate-config": { data in
            _ = try? CLIConfiguration.parse(data)
            if let configuration = try? MediationConfiguration.decode(json: data, formats: MarsFactory.formats) {
                try? configuration.validate(networks: ["n": Set(AdFormat.Kind.builtIn).union(MarsFactory.formats)])
            }
        },
        "cache-control": { _ = CacheControl(String(decoding: $0, as: UTF8.self)) },
        "retry-after": { data in
            let value = String(decoding: data, as: UTF8.self)
            _ = HTTPResponse.parseRetryAfter(value)
            _ = HTTPResponse(status: 429, headers: ["Retry-After": value], body: data).errorSummary
        },
        "sandbox-scenario": { _ = try? SandboxScenario.decode(json: $0) },
        "consent-strings": { data in
            // TCF, GPP, US National and US Privacy strings, as stored values and through the privacy rules.
            let text = String(decoding: data, as: UTF8.self)
            _ = try? TCFConsent(decoding: text)
            _ = try? USNationalSection(decoding: text)
            let store = InMemoryConsentStore([
                "IABTCF_gdprApplies": .string(text), "IABTCF_TCString": .string(text),
                "IABGPP_HDR_GppString": .string(text), "IABGPP_GppSID": .string(text),
                "IABUSPrivacy_String": .string(text),
            ])
            _ = PrivacySignals(store: store, logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }))
            let signals = PrivacySignals(gdprApplies: true, tcfConsent: text, usPrivacy: text, gpp: text)
            _ = PrivacyRules.verdict(signals, tcfVendorID: 755)
        },
        "ohttp-messages": { data in
            // Everything an OHTTP peer reads from the other side: binary HTTP, key configurations, and encapsulated
            // requests and responses (which must fail to decrypt cleanly).
            _ = try? BinaryHTTPRequest(decoding: data)
            _ = try? BinaryHTTPResponse(decoding: data)
            _ = try? ObliviousHTTPKeyConfiguration(decoding: data)
            _ = try? ObliviousHTTPKeyConfiguration.list(decoding: data)
            _ = try? gateway.decapsulate(data)
            _ = try? responseContext?.decapsulate(data)
        },
    ]
    static let gateway = ObliviousHTTPGateway(keyID: 1)
    static let responseContext = try? ObliviousHTTPClient.encapsulate(Data([0, 3]), for: gateway.configuration).context
}

/// The target this process fuzzes (from FUZZ_TARGET).
let selected: (@Sendable (Data) -> Void)? = ProcessInfo.processInfo.environment["FUZZ_TARGET"].flatMap {
    Targets.all[$0]
}

#if FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32
#endif

@main
struct FuzzDecoders {
    static func main() {
        if CommandLine.arguments.dropFirst().first == "--list" {
            print(Targets.all.keys.sorted().joined(separator: "\n"))
            exit(0)
        }
        #if FUZZING
            guard selected != nil else {
                FileHandle.standardError.write(
                    Data("set FUZZ_TARGET to one of: \(Targets.all.keys.sorted().joined(separator: ", "))\n".utf8))
                exit(2)
            }
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(
                LLVMFuzzerRunDriver(&argc, &argv) { bytes, count in
                    selected?(bytes.map { Data(bytes: $0, count: count) } ?? Data())
                    return 0
                })
        #else
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = Targets.all[name] else {
                print(
                    ("usage: fuzz-decoders TARGET FILE-OR-DIRECTORY… | --list  "
                        + "(targets: \(Targets.all.keys.sorted().joined(separator: ", ")))")
                )
                exit(2)
            }
            var replayed = 0
            for path in arguments.dropFirst() {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
                let files =
                    isDirectory.boolValue
                    ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map {
                        path + "/" + $0
                    } : [path]
                for file in files {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    target(data)
                    replayed += 1
                }
            }
            print("\(name): replayed \(replayed) inputs")
        #endif
    }
}
