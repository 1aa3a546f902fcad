// swift-tools-version:6.0
import PackageDescription

// The project's tools, beside the library package (the repository's root) and depending on it by path: the `mediate`
// CLI, the demand sandbox, MediateKit (the CLI's configuration), the examples that run against the sandbox, the
// fuzzers, and the tests that need the sandbox. Their sources stay where the project keeps them — Sources/, Tests/ and
// Examples/ at the root, reached through this folder's symbolic links — so the layout is one tree; the split is in
// the manifests: an app that adds the library package fetches none of the dependencies below that only the tools use
// (Hummingbird, SwiftNIO, ArgumentParser, HdrHistogram).
//
// Code here sees the library's public API only (Swift's `package` access stops at a package's edge); the tests reach
// the library's internals with `@testable import`, as tests do.

// `make fuzz` builds with ADMEDIATION_FUZZ=1 (in its own scratch folder): the project's own modules get
// AddressSanitizer and libFuzzer's coverage instrumentation (the library package reads the same variable), and
// `fuzz-decoders` links libFuzzer's driver (its path in ADMEDIATION_FUZZER_LIB). A normal build has none of it, and
// `fuzz-decoders` then replays corpus files.
let fuzzing = Context.environment["ADMEDIATION_FUZZ"] == "1"
let fuzzSettings: [SwiftSetting] =
    fuzzing
    ? [
        .unsafeFlags([
            "-sanitize=address", "-sanitize-coverage=edge,indirect-calls,trace-cmp,inline-8bit-counters,pc-table",
        ]),
        .define("FUZZING"),
    ] : []
let fuzzLinkerSettings: [LinkerSetting] =
    fuzzing
    ? [
        .unsafeFlags(["-sanitize=address", "-Xlinker", Context.environment["ADMEDIATION_FUZZER_LIB"] ?? "", "-lstdc++"])
    ] : []

/// The sandbox, the CLI and the GrowthCat tests run their background work in a `ServiceGroup`.
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")

/// A library product of the root package.
func lib(_ name: String) -> Target.Dependency { .product(name: name, package: "AdMediation") }

let package = Package(
    name: "AdMediationTools",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "mediate", targets: ["mediate"]),
        .library(name: "DemandSandbox", targets: ["DemandSandbox"]),
        .library(name: "MediateKit", targets: ["MediateKit"]),
    ],
    dependencies: [
        // The library, by path: `name:` keeps the product references right whatever the checkout's folder is called.
        .package(name: "AdMediation", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // What a network's sandbox routes are written against (`SandboxRouteModule`): no server, no dependencies.
        .target(name: "SandboxRouting"),

        // Each network's sandbox routes, in its own folder beside its adapter.
        .target(name: "AppOpenSandbox", dependencies: ["SandboxRouting"], path: "Adapters/AppOpen/Sandbox"),
        .target(
            name: "ChartboostSandbox",
            dependencies: ["SandboxRouting", lib("AdapterKit"), .product(name: "Crypto", package: "swift-crypto")],
            path: "Adapters/Chartboost/Sandbox"),
        .target(
            name: "GrowthCatSandbox", dependencies: ["SandboxRouting", lib("AdMediation"), lib("AdapterKit")],
            path: "Adapters/GrowthCat/Sandbox"),
        .target(
            name: "MARSSandbox", dependencies: ["SandboxRouting", lib("AdMediation")], path: "Adapters/MARS/Sandbox"),
        .target(
            name: "OpenRTBSandbox", dependencies: ["SandboxRouting", lib("AdMediation")],
            path: "Adapters/OpenRTB/Sandbox"),

        // The registry of built-in networks: one line each (its factory, its sandbox routes and their sample line).
        .target(
            name: "BuiltInNetworks",
            dependencies: [
                lib("AdMediation"), lib("AdapterKit"), lib("AppOpenAds"), "AppOpenSandbox", lib("ChartboostBanners"),
                "ChartboostSandbox", lib("GrowthCatAds"), "GrowthCatSandbox", lib("MARSAds"), "MARSSandbox",
                lib("OpenRTBBidder"), "OpenRTBSandbox", "SandboxRouting",
            ]),

        // Local servers speaking the four wire contracts, with scenarios, faults and records.
        .target(
            name: "DemandSandbox",
            dependencies: [
                "BuiltInNetworks", "SandboxRouting",
                lib("AdMediation"), lib("AdTransport"), lib("AdapterKit"), lib("ObliviousHTTP"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"), serviceLifecycle,
            ], swiftSettings: fuzzSettings),

        // The CLI's configuration file (parsed and validated; builds the adapters), apart so the fuzzer can reach it.
        .target(
            name: "MediateKit",
            dependencies: [
                lib("AdMediation"), lib("AdTransport"), lib("AdapterKit"), lib("MediationFileFormat"),
                lib("CurlTransport"), "BuiltInNetworks", lib("GrowthCatAds"), lib("AdMediationServices"),
                serviceLifecycle,
            ], swiftSettings: fuzzSettings),

        // The CLI.
        .executableTarget(
            name: "mediate",
            dependencies: [
                lib("AdMediation"), lib("AdMediationTesting"), lib("AdNetworkConformance"), lib("AdStorage"),
                lib("AdPrivacy"), lib("AdTransport"), lib("CurlTransport"),
                "DemandSandbox", lib("AppOpenAds"), lib("ChartboostBanners"), lib("MARSAds"), lib("GrowthCatAds"),
                "BuiltInNetworks", "MediateKit", lib("AdapterKit"),
                lib("AdMediationServices"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"), serviceLifecycle,
            ]),

        .executableTarget(
            name: "app-open-day",
            dependencies: [
                lib("AdMediationTesting"), lib("AdPresentation"), lib("AppOpenAds"), lib("CurlTransport"),
                "DemandSandbox",
            ],
            path: "Examples/app-open-day"
        ),
        .executableTarget(
            name: "banner-timeline",
            dependencies: [
                lib("AdMediationTesting"), lib("AdPresentation"), lib("ChartboostBanners"), lib("CurlTransport"),
                "DemandSandbox",
            ],
            path: "Examples/banner-timeline"
        ),
        .executableTarget(
            name: "rewarded-flow",
            dependencies: [
                lib("AdMediationTesting"), lib("GrowthCatAds"), lib("CurlTransport"), "DemandSandbox",
                "GrowthCatSandbox",
            ],
            path: "Examples/rewarded-flow"
        ),
        .executableTarget(
            name: "mars-newtab",
            dependencies: [lib("MARSAds"), lib("CurlTransport"), "DemandSandbox", "MARSSandbox"],
            path: "Examples/mars-newtab"
        ),
        // libFuzzer targets for every decoder (`make fuzz`); in a normal build, a corpus replayer.
        .executableTarget(
            name: "fuzz-decoders",
            dependencies: [
                lib("AdMediationTesting"),
                lib("AdMediation"), lib("GrowthCatAds"), lib("MARSAds"), lib("ChartboostBanners"), lib("AppOpenAds"),
                lib("AdPrivacy"), lib("AdTransport"), lib("AdapterKit"), "BuiltInNetworks", "DemandSandbox",
                "MediateKit", lib("MediationFileFormat"), lib("ObliviousHTTP"), lib("OpenRTBBidder"),
            ],
            path: "Tests/Fuzz",
            exclude: ["Corpus"],
            swiftSettings: fuzzSettings,
            linkerSettings: fuzzLinkerSettings
        ),

        // Test helpers (the root package declares the same folder for its own tests): child processes watched off the
        // cooperative pool, the measured scheduler slack, loopback servers.
        .target(
            name: "TestSupport",
            dependencies: [
                lib("AdMediation"), lib("AdNetworkConformance"), lib("AdPrivacy"), lib("AdTransport"),
                lib("AdapterKit"), lib("CurlTransport"), lib("AdMediationTesting"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/TestSupport"),
        .testTarget(
            name: "DemandSandboxTests",
            dependencies: [
                "GrowthCatSandbox", "MARSSandbox",
                "OpenRTBSandbox",
                lib("AdMediationTesting"), "DemandSandbox", lib("CurlTransport"), lib("AdMediation"), lib("AdapterKit"),
                lib("AdNetworkConformance"), lib("AdTransport"), "BuiltInNetworks", "ChartboostSandbox",
                "SandboxRouting", "TestSupport",
            ]),
        .testTarget(
            name: "AppOpenAdsTests",
            dependencies: [
                lib("AppOpenAds"), lib("AdPresentation"), lib("AdNetworkConformance"), lib("AdTransport"),
                lib("AdapterKit"), "DemandSandbox", lib("CurlTransport"),
                lib("AdMediationTesting"), "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ], exclude: ["Fixtures"]),
        .testTarget(
            name: "ChartboostBannersTests",
            dependencies: [
                lib("ChartboostBanners"), lib("AdPresentation"), lib("AdNetworkConformance"), lib("AdTransport"),
                "DemandSandbox",
                lib("CurlTransport"),
                lib("AdMediationTesting"), "TestSupport",
            ], exclude: ["Fixtures"]),
        .testTarget(
            name: "MARSAdsTests",
            dependencies: [
                "MARSSandbox",
                lib("MARSAds"), lib("AdStorage"), lib("ObliviousHTTP"), lib("AdNetworkConformance"), lib("AdTransport"),
                lib("AdapterKit"), "DemandSandbox",
                lib("CurlTransport"),
                lib("AdMediationTesting"), "TestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ], exclude: ["Fixtures"]),
        .testTarget(
            name: "MediateCLITests",
            dependencies: [
                "OpenRTBSandbox",
                lib("AdMediationTesting"),
                "mediate", "DemandSandbox", lib("AdStorage"), "MediateKit", lib("AdMediation"), lib("AdTransport"),
                lib("AdapterKit"),
                lib("AdNetworkConformance"),
                lib("CurlTransport"), lib("GrowthCatAds"), "GrowthCatSandbox", "TestSupport",
            ], exclude: ["Fixtures"]),
        .executableTarget(
            name: "growthcat-crash-child", dependencies: [lib("GrowthCatAds"), lib("CurlTransport")],
            path: "Tests/CrashChild"),
        .testTarget(
            name: "GrowthCatAdsTests",
            dependencies: [
                lib("GrowthCatAds"), lib("AdPrivacy"), lib("AdStorage"), lib("AdTransport"),
                .product(name: "Logging", package: "swift-log"),
                lib("AdNetworkConformance"),
                "DemandSandbox", "GrowthCatSandbox", lib("CurlTransport"), lib("AdMediationTesting"), "TestSupport",
                "growthcat-crash-child",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "GRDB", package: "GRDB.swift"), serviceLifecycle, lib("AdMediationServices"),
            ], exclude: ["Fixtures"]),
        .testTarget(
            name: "OpenRTBBidderTests",
            dependencies: [
                "OpenRTBSandbox",
                lib("OpenRTBBidder"), lib("AdMediation"), lib("AdNetworkConformance"), lib("AdTransport"),
                lib("AdapterKit"), "DemandSandbox",
                lib("CurlTransport"),
                lib("AdMediationTesting"), "TestSupport",
            ], exclude: ["Fixtures"]),
        .testTarget(
            name: "FaultMatrixTests",
            dependencies: [
                lib("AdMediationTesting"),
                lib("AdMediation"), lib("AdNetworkConformance"), lib("AdPrivacy"), lib("AdTransport"), "DemandSandbox",
                lib("AdapterKit"), "BuiltInNetworks", lib("CurlTransport"), lib("GrowthCatAds"), lib("MARSAds"),
                lib("ChartboostBanners"), lib("AppOpenAds"), lib("OpenRTBBidder"), "TestSupport",
            ]),
        // A sixth, toy network in a folder of its own: proves docs/ARCHITECTURE.md's "Adding a network" checklist.
        .testTarget(
            name: "AddANetworkTests",
            dependencies: [
                lib("AdMediation"), lib("AdapterKit"), lib("AdMediationTesting"), lib("AdNetworkConformance"),
                lib("AdTransport"), lib("CurlTransport"),
                "DemandSandbox", "MediateKit", "SandboxRouting",
            ]),
        // Wall-clock bounds (bounded by the contract plus the measured scheduler slack); `make test` runs it last.
        .testTarget(
            name: "TimingTests",
            dependencies: [
                lib("AdMediation"), lib("AdNetworkConformance"), lib("AdStorage"), lib("AdTransport"),
                lib("CurlTransport"), lib("AdMediationTesting"),
                "TestSupport", "DemandSandbox",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
