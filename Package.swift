// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "AdMediation",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AdMediation", targets: ["AdMediation"]),
        .library(name: "CurlTransport", targets: ["CurlTransport"]),
        .library(name: "AdNetworkConformance", targets: ["AdNetworkConformance"]),
        .library(name: "LoopbackServer", targets: ["LoopbackServer"]),
        .executable(name: "transport-demo", targets: ["transport-demo"]),
    ],
    targets: [
        // Core: protocol, value types, errors, clock, mediator. No I/O dependencies.
        .target(name: "AdMediation"),

        // The conformance kit for adapter authors (core only, no test framework).
        .target(name: "AdNetworkConformance", dependencies: ["AdMediation"]),

        // libcurl through pkg-config, and a tiny C shim for the variadic calls.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CurlShim", dependencies: ["CCurl"]),
        .target(name: "CurlTransport", dependencies: ["AdMediation", "CCurl", "CurlShim"]),

        // A raw HTTP/1.1 loopback server with fault injection, for transport tests and benchmarks.
        .target(name: "LoopbackServer"),

        .executableTarget(
            name: "transport-demo",
            dependencies: ["CurlTransport", "LoopbackServer"],
            path: "Examples/transport-demo"
        ),

        .testTarget(name: "AdMediationTests", dependencies: ["AdMediation", "AdNetworkConformance"]),
        .testTarget(name: "AdNetworkConformanceTests", dependencies: ["AdNetworkConformance"]),
        .testTarget(name: "CurlTransportTests", dependencies: ["CurlTransport", "CurlShim", "LoopbackServer"]),
    ],
    swiftLanguageModes: [.v6]
)
