// swift-tools-version:6.1
// Comparison benchmarks, kept out of the main package so AsyncHTTPClient (and SwiftNIO) stay out of its build.
import PackageDescription

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AdMediation", path: ".."),
        // The demand sandbox (and, for `make bench-check`, the `mediate` CLI) is in the tools package.
        .package(name: "AdMediationTools", path: "../Tools"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .target(name: "BenchSupport", dependencies: [.product(name: "AdMediation", package: "AdMediation")]),
        .executableTarget(
            name: "transport-bench",
            dependencies: [
                .product(name: "CurlTransport", package: "AdMediation"),
                .product(name: "URLSessionTransport", package: "AdMediation"),
                .product(name: "AdMediationTesting", package: "AdMediation"),
                .product(name: "AdTransport", package: "AdMediation"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .executableTarget(
            name: "mediator-bench",
            dependencies: [
                .product(name: "AdMediation", package: "AdMediation"),
                .product(name: "AdNetworkConformance", package: "AdMediation"),
                .product(name: "Logging", package: "swift-log"),
                "BenchSupport",
            ]
        ),
        .executableTarget(
            name: "sandbox-bench",
            dependencies: [
                .product(name: "CurlTransport", package: "AdMediation"),
                .product(name: "AdMediationTesting", package: "AdMediation"),
                .product(name: "DemandSandbox", package: "AdMediationTools"),
                .product(name: "MARSAds", package: "AdMediation"),
                .product(name: "AdStorage", package: "AdMediation"),
                .product(name: "AdTransport", package: "AdMediation"),
            ]
        ),
        // What an app feels (issue 36): hung partners, start-up, idle cost, a long session.
        .executableTarget(
            name: "app-bench",
            dependencies: [
                .product(name: "AdMediation", package: "AdMediation"),
                .product(name: "AdMediationTesting", package: "AdMediation"),
                .product(name: "CurlTransport", package: "AdMediation"),
                .product(name: "DemandSandbox", package: "AdMediationTools"),
                .product(name: "OpenRTBBidder", package: "AdMediation"),
                .product(name: "ChartboostBanners", package: "AdMediation"),
                .product(name: "AppOpenAds", package: "AdMediation"),
                .product(name: "GrowthCatAds", package: "AdMediation"),
                .product(name: "MARSAds", package: "AdMediation"),
                .product(name: "AdPresentation", package: "AdMediation"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // package-benchmark: allocation counts and static regression thresholds (`swift package benchmark`).
        .executableTarget(
            name: "MediatorMicro",
            dependencies: [
                .product(name: "AdMediation", package: "AdMediation"),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Logging", package: "swift-log"),
                "BenchSupport",
            ],
            path: "Benchmarks/MediatorMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
