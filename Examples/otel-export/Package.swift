// swift-tools-version:6.2
import PackageDescription

// A separate package, so the main build stays free of swift-otel and its exporters (AsyncHTTPClient, protobuf):
// `cd Examples/otel-export && swift run otel-export`.
let package = Package(
    name: "otel-export",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AdMediation", path: "../.."),
        // The demand sandbox is in the tools package.
        .package(name: "AdMediationTools", path: "../../Tools"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "otel-export",
            dependencies: [
                .product(name: "AdMediation", package: "AdMediation"),
                .product(name: "CurlTransport", package: "AdMediation"),
                .product(name: "DemandSandbox", package: "AdMediationTools"),
                .product(name: "MARSAds", package: "AdMediation"),
                .product(name: "ChartboostBanners", package: "AdMediation"),
                .product(name: "AdMediationTesting", package: "AdMediation"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
