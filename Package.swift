// swift-tools-version:6.1
import Foundation
import PackageDescription

// Module layout follows the weight of dependencies (see docs/architecture.md):
//   HeraldDomain    pure Swift: tag expressions, templates, registrations, events, records
//   HeraldKafka     the only module that imports librdkafka (CRdKafka)
//   HeraldRedis     the only module that imports hiredis (CHiredis)
//   HeraldRegistry  registration log (Kafka) and index (Redis slot layout, Lua)
//   HeraldStreams   Herald's topics from outside the hot path: names, provisioning, publishing
//                   events, tailing records, statistics, status record coding
//   HeraldPipeline  worker roles: planner, fan-out, indexer, scheduler, sender
//   HeraldPush      the push services' clients: APNs (HTTP/2, ES256 provider tokens), FCM HTTP v1
//   HeraldAPI       Hummingbird HTTP API and access control (builds without librdkafka and hiredis)
//   HeraldApp       configuration and service wiring shared by the commands
//   HeraldCLI       the `herald` executable
let package = Package(
    name: "herald",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "herald", targets: ["HeraldCLI"]),
        // Local development: `herald-local demo` (make run) and `herald-local push-sandbox`.
        .executable(name: "herald-local", targets: ["HeraldLocal"]),
        .library(name: "HeraldDomain", targets: ["HeraldDomain"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        // The sender's HTTP/2 client for APNs and FCM, and the local push servers of the tests.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // Tests only: reads the checked-in openapi.yaml to compare it with the router.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        // MARK: C libraries
        .systemLibrary(
            name: "CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"]), .brew(["librdkafka"])]
        ),
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"]), .brew(["hiredis"])]
        ),

        // glibc's malloc.h (mallopt), for HERALD_ALLOCATOR; no library to link.
        .systemLibrary(name: "CMalloc"),

        // MARK: Herald modules
        .target(name: "HeraldDomain"),
        .target(
            name: "HeraldKafka",
            dependencies: [
                "CRdKafka",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HeraldRedis",
            dependencies: [
                "CHiredis",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HeraldRegistry",
            dependencies: [
                "HeraldDomain", "HeraldKafka", "HeraldRedis",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "HeraldStreams",
            dependencies: ["HeraldDomain", "HeraldKafka", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "HeraldPush",
            dependencies: [
                "HeraldDomain",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HeraldPipeline",
            dependencies: [
                "HeraldDomain", "HeraldKafka", "HeraldRedis", "HeraldRegistry", "HeraldStreams", "HeraldPush",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // No Kafka or Redis here (no C libraries): HeraldApp implements the API's protocols.
        .target(
            name: "HeraldAPI",
            dependencies: [
                "HeraldDomain",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            resources: [.copy("openapi.yaml"), .copy("Console")]
        ),
        .target(
            name: "HeraldApp",
            dependencies: [
                "CMalloc", "HeraldDomain", "HeraldKafka", "HeraldRedis", "HeraldRegistry", "HeraldPipeline", "HeraldStreams",
                "HeraldAPI", "HeraldPush",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Options and helpers shared by the two executables.
        .target(
            name: "HeraldCommandLine",
            dependencies: ["HeraldApp", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .executableTarget(
            name: "HeraldCLI",
            dependencies: [
                "HeraldApp", "HeraldCommandLine", "HeraldAPI", "HeraldDomain", "HeraldKafka",
                "HeraldPipeline", "HeraldPush", "HeraldRedis", "HeraldRegistry", "HeraldStreams",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `herald-local`: the demo story on the embedded stack and the local push servers,
        // which the production `herald` executable does not link.
        .executableTarget(
            name: "HeraldLocal",
            dependencies: [
                "HeraldApp", "HeraldCommandLine", "HeraldAPI", "HeraldDomain", "HeraldKafka", "HeraldLocalPush", "HeraldPipeline",
                "HeraldRedis", "HeraldRegistry", "HeraldStreams",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // Local APNs and FCM servers (HTTP/2 over TLS with a generated CA, the services' real
        // protocols, scriptable answers) for the demo, the bench and the tests.
        .target(
            name: "HeraldLocalPush",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // Tests only (it imports Testing): private redis-server and broker processes on free
        // ports, the limit on heavy tests running at once, waits that fail only when nothing
        // progresses. Never linked by an executable; make test checks that.
        .target(
            name: "HeraldTestSupport",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),

        // MARK: Tests
        .testTarget(
            name: "HeraldDomainTests",
            dependencies: [
                "HeraldDomain",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "HeraldPushTests",
            dependencies: [
                "HeraldPush", "HeraldDomain", "HeraldLocalPush", "HeraldTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        .testTarget(name: "HeraldKafkaTests", dependencies: ["HeraldKafka", "HeraldTestSupport"]),
        .testTarget(name: "HeraldRedisTests", dependencies: ["HeraldRedis", "HeraldTestSupport"]),
        .testTarget(name: "HeraldRegistryTests", dependencies: ["HeraldRegistry", "HeraldTestSupport"]),
        .testTarget(name: "HeraldPipelineTests", dependencies: ["HeraldPipeline", "HeraldStreams", "HeraldPush", "HeraldTestSupport"]),
        .testTarget(
            name: "HeraldAPITests",
            dependencies: [
                "HeraldAPI", "HeraldTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "HeraldIntegrationTests",
            dependencies: [
                "HeraldAPI", "HeraldApp", "HeraldLocalPush", "HeraldTestSupport", "HeraldDomain", "HeraldKafka", "HeraldPipeline",
                "HeraldStreams",
                "HeraldRedis", "HeraldRegistry",
            ],
            // Run by AzureClientTests with the Azure client from PyPI (scripts/bootstrap installs it).
            exclude: ["azure_client.py"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The benchmark harness (`herald-bench`, which `herald bench` and `make bench` run) is part of
// the package only when HERALD_BENCH=1, as `make bench` and `make test` set it: a plain
// `swift build`, `make run` and the container image build nothing of it.
if ProcessInfo.processInfo.environment["HERALD_BENCH"] == "1" {
    package.products.append(.executable(name: "herald-bench", targets: ["HeraldBench"]))
    package.targets += [
        // The harness of `herald-bench`: broker ceiling, broadcast, latency, memory and micro-benchmarks.
        .target(
            name: "HeraldBenchmarks",
            dependencies: [
                "HeraldDomain", "HeraldKafka", "HeraldRedis", "HeraldRegistry", "HeraldPipeline", "HeraldStreams", "HeraldPush",
                "HeraldLocalPush",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "HeraldBench",
            dependencies: [
                "HeraldApp", "HeraldBenchmarks", "HeraldCommandLine", "HeraldPipeline",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "HeraldBenchmarksTests",
            dependencies: [
                "HeraldBenchmarks", "HeraldDomain", "HeraldKafka", "HeraldRedis", "HeraldTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
}
