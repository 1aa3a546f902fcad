// swift-tools-version:6.0
import PackageDescription

// The library package: only what an app links (the core, the transports, the adapters, storage, presentation, the
// UI models, the adapter and conformance kits) and their tests. The `mediate` CLI, the demand sandbox, MediateKit, the
// examples that run against the sandbox, the fuzzers and the tests that need the sandbox are declared by the tools
// package in Tools/ (their sources stay in Sources/, Tests/ and Examples/), so an app that adds this package fetches
// none of the tools' dependencies (Hummingbird, SwiftNIO, ArgumentParser, HdrHistogram).

// `make fuzz` builds the tools package with ADMEDIATION_FUZZ=1 (in its own scratch folder): this package's modules get
// AddressSanitizer and libFuzzer's coverage instrumentation too.
let fuzzing = Context.environment["ADMEDIATION_FUZZ"] == "1"
let fuzzSettings: [SwiftSetting] =
    fuzzing
    ? [
        .unsafeFlags([
            "-sanitize=address", "-sanitize-coverage=edge,indirect-calls,trace-cmp,inline-8bit-counters,pc-table",
        ]),
        .define("FUZZING"),
    ] : []

// `make docs` sets ADMEDIATION_DOCS=1 for `swift package generate-documentation`: the DocC plugin is a development
// tool, so an app's package graph does not fetch it.
let docsPlugin: [Package.Dependency] =
    Context.environment["ADMEDIATION_DOCS"] == "1"
    ? [.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0")] : []

/// The opt-in `AdMediationServices` module (and the tests of its conformances) use swift-service-lifecycle.
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")

let package = Package(
    name: "AdMediation",
    // Apple platforms at what the code needs: the core and the adapters use the standard library's `Synchronization`
    // (`Atomic`; the locks are the core's `LockedValue`), which starts at iOS 18, macOS 15 and tvOS 18. The
    // dependencies need less (GRDB 7: iOS 13, swift-crypto, swift-log, swift-metrics, swift-distributed-tracing: iOS 13
    // or older). libcurl (CurlTransport) is for macOS and Linux; an iOS or tvOS app uses URLSessionTransport.
    platforms: [.iOS(.v18), .macOS(.v15), .tvOS(.v18)],
    products: [
        .library(name: "AdMediation", targets: ["AdMediation"]),
        .library(name: "AdTransport", targets: ["AdTransport"]),
        .library(name: "AdPrivacy", targets: ["AdPrivacy"]),
        .library(name: "CurlTransport", targets: ["CurlTransport"]),
        .library(name: "URLSessionTransport", targets: ["URLSessionTransport"]),
        .library(name: "AdMediationServices", targets: ["AdMediationServices"]),
        .library(name: "AdNetworkConformance", targets: ["AdNetworkConformance"]),
        .library(name: "AdMediationTesting", targets: ["AdMediationTesting"]),
        .library(name: "AdPresentation", targets: ["AdPresentation"]),
        .library(name: "AdUIModels", targets: ["AdUIModels"]),
        .library(name: "AdapterKit", targets: ["AdapterKit"]),
        .library(name: "MediationFileFormat", targets: ["MediationFileFormat"]),
        .library(name: "AppOpenAds", targets: ["AppOpenAds"]),
        .library(name: "AdStorage", targets: ["AdStorage"]),
        .library(name: "ObliviousHTTP", targets: ["ObliviousHTTP"]),
        .library(name: "ChartboostBanners", targets: ["ChartboostBanners"]),
        .library(name: "MARSAds", targets: ["MARSAds"]),
        .library(name: "GrowthCatAds", targets: ["GrowthCatAds"]),
        .library(name: "OpenRTBBidder", targets: ["OpenRTBBidder"]),
        .executable(name: "transport-demo", targets: ["transport-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ] + docsPlugin,
    targets: [
        // Below the core: the IAB consent strings (TCF v2, GPP, US Privacy, US National) decoded into values, and the
        // privacy rule table that decides from them what a network may be asked and receive. Pure, bounded, no
        // dependency; the core's mediator applies the rules (its `PrivacySignals` conform to `PrivacySignalValues`).
        .target(name: "AdPrivacy", swiftSettings: fuzzSettings),

        // Below the core: the HTTP transport contract (`HTTPClient`, its value types and `HTTPClientError`), URL
        // classification and the destination policy, the rules both transports share (`package`), and the bounds on
        // outside values (`JSONLimits`, `OutsideValue`). Adapters and transports name it; apps rarely do.
        .target(
            name: "AdTransport",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ], swiftSettings: fuzzSettings),

        // Core: protocol, value types, errors, clock, mediator. No I/O dependencies.
        // swift-log and swift-metrics are API-only: the app chooses the backends.
        .target(
            name: "AdMediation",
            dependencies: [
                "AdPrivacy", "AdTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            // Apple's privacy manifest: no tracking, no collected data, the required-reason APIs the library uses
            // (`make privacy-check` keeps it in step with the code).
            resources: [.copy("PrivacyInfo.xcprivacy")], swiftSettings: fuzzSettings),

        // The mediation configuration's JSON file form (Codable, snake_case keys, errors at the field path): the core's
        // configuration is plain values; the CLI and apps that read the same file use this.
        .target(
            name: "MediationFileFormat", dependencies: ["AdMediation", "AdTransport", "AdapterKit"],
            swiftSettings: fuzzSettings),

        // The conformance kit for adapter authors (the core and AdapterKit; no test framework).
        .target(
            name: "AdNetworkConformance",
            dependencies: ["AdMediation", "AdMediationTesting", "AdTransport", "AdapterKit"]),

        // The adapter kit, public for adapter authors outside the project too: the request runner (deadline,
        // cancellation, status and transport-error mapping) and JSON wire codecs.
        .target(name: "AdapterKit", dependencies: ["AdMediation", "AdTransport"], swiftSettings: fuzzSettings),

        // Plumbing every adapter shares (privacy on the wire, query strings, prices, tracking): `package` access only.
        .target(
            name: "AdapterSupport", dependencies: ["AdMediation", "AdTransport", "AdapterKit"],
            swiftSettings: fuzzSettings),

        // libcurl through pkg-config, and a tiny C shim for the variadic calls.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CurlShim", dependencies: ["CCurl"]),
        .target(
            name: "CurlTransport",
            dependencies: [
                "AdMediation", "AdTransport", "CCurl", "CurlShim", .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),

        // URLSession (Foundation; FoundationNetworking on Linux): the transport for iOS and tvOS apps. No libcurl.
        .target(name: "URLSessionTransport", dependencies: ["AdMediation", "AdTransport"]),

        // Opt-in: every `BackgroundWork` component as a swift-service-lifecycle `Service`, for servers and tools that
        // run a `ServiceGroup` (the library's own modules do not depend on swift-service-lifecycle).
        .target(name: "AdMediationServices", dependencies: ["AdMediation", serviceLifecycle]),

        // For tests and simulations: a manual clock, a scripted network, and a raw HTTP/1.1 loopback server with fault
        // injection (transport tests and benchmarks).
        .target(name: "AdMediationTesting", dependencies: ["AdMediation"]),

        // SQLite storage (GRDB): the HTTP cache, later the durable event queue.
        // Binary HTTP (RFC 9292) and Oblivious HTTP (RFC 9458) on swift-crypto's HPKE.
        .target(
            name: "ObliviousHTTP",
            dependencies: ["AdMediation", "AdTransport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: fuzzSettings),

        .target(
            name: "AdStorage",
            dependencies: [
                "AdMediation", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ], swiftSettings: fuzzSettings),

        // Presentation rules that work with any network: the banner slot with refresh and the app-open manager
        // (full-screen rules are in the core, beside the event ledger they feed). No I/O.
        .target(name: "AdPresentation", dependencies: ["AdMediation"], swiftSettings: fuzzSettings),

        // `@MainActor @Observable` models over the presentation sessions (full screen, banner slot, app open) for an
        // app's SwiftUI or UIKit views: Observation only (it ships with the toolchain), no rule of their own.
        .target(name: "AdUIModels", dependencies: ["AdMediation", "AdPresentation"]),

        // Adapters: one module per network; they see the core only and never each other.
        .target(
            name: "AppOpenAds", dependencies: ["AdMediation", "AdTransport", "AdapterKit", "AdapterSupport"],
            path: "Adapters/AppOpen", exclude: ["Sandbox"],  // its sandbox routes build with the tools (Tools/)
            swiftSettings: fuzzSettings),
        .target(
            name: "ChartboostBanners",
            dependencies: [
                "AdMediation", "AdTransport", "AdapterKit", "AdapterSupport", "AdPresentation",
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Adapters/Chartboost", exclude: ["Sandbox"],  // its sandbox routes build with the tools (Tools/)
            swiftSettings: fuzzSettings),
        .target(
            name: "MARSAds",
            dependencies: [
                "AdMediation", "AdTransport", "AdapterKit", "AdapterSupport", "AdStorage", "ObliviousHTTP",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Adapters/MARS", exclude: ["Sandbox"],  // its sandbox routes build with the tools (Tools/)
            swiftSettings: fuzzSettings),
        .target(
            name: "GrowthCatAds",
            dependencies: [
                "AdMediation", "AdTransport", "AdapterKit", "AdapterSupport", "AdStorage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ], path: "Adapters/GrowthCat", exclude: ["Sandbox"],  // its sandbox routes build with the tools (Tools/)
            swiftSettings: fuzzSettings),
        .target(
            name: "OpenRTBBidder", dependencies: ["AdMediation", "AdTransport", "AdapterKit", "AdapterSupport"],
            path: "Adapters/OpenRTB", exclude: ["Sandbox"],  // its sandbox routes build with the tools (Tools/)
            swiftSettings: fuzzSettings),

        // The iOS article's sample view model (no UIKit: compiled and run headless here).
        .executableTarget(
            name: "ios-view-model", dependencies: ["AdMediation", "AdPresentation", "AdMediationTesting"],
            path: "Examples/ios-view-model"
        ),
        .executableTarget(
            name: "transport-demo",
            dependencies: ["CurlTransport", "AdMediationTesting", "AdTransport"],
            path: "Examples/transport-demo"
        ),

        // Test helpers: child processes watched off the cooperative pool, the measured scheduler slack, loopback
        // servers.
        .target(
            name: "TestSupport",
            dependencies: [
                "AdMediation", "AdNetworkConformance", "AdPrivacy", "AdTransport", "AdapterKit", "CurlTransport",
                "AdMediationTesting", .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/TestSupport"),
        .testTarget(
            name: "AdMediationTests",
            dependencies: [
                "AdMediationTesting",
                "AdMediation", "AdNetworkConformance", "AdPrivacy", "AdStorage", "AdTransport", "AdapterKit",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]),
        .testTarget(
            name: "AdapterSupportTests",
            dependencies: [
                "AdapterSupport", "AdapterKit", "AdMediation", "AdTransport", "CurlTransport", "AdMediationTesting",
            ]),
        .testTarget(
            name: "MediationFileFormatTests",
            dependencies: ["AdMediation", "AdMediationTesting", "MediationFileFormat"]),
        .testTarget(
            name: "AdUIModelsTests",
            dependencies: ["AdUIModels", "AdMediation", "AdPresentation", "AdMediationTesting"]),
        .testTarget(
            name: "AdNetworkConformanceTests",
            dependencies: ["AdMediationTesting", "AdNetworkConformance", "AdTransport"]),
        .testTarget(name: "ObliviousHTTPTests", dependencies: ["AdMediationTesting", "ObliviousHTTP"]),
        .testTarget(
            name: "CurlTransportTests",
            dependencies: [
                "CurlTransport", "URLSessionTransport", "CurlShim", "AdMediationTesting", "AdTransport", "TestSupport",
                .product(name: "Logging", package: "swift-log"), serviceLifecycle, "AdMediationServices",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]),
        // A deliberate data race and its locked twin for `make tsan-selfcheck` (proof that ThreadSanitizer sees the
        // project's lock); skipped unless TSAN_FIXTURE=1, so the plain suite never runs the race.
        .testTarget(name: "TSanFixture", dependencies: ["AdMediation"]),
    ],
    swiftLanguageModes: [.v6]
)
