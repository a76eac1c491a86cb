// swift-tools-version:6.2
import PackageDescription

import class Foundation.ProcessInfo

let package = Package(
    name: "cenariusd",
    platforms: [.macOS(.v15)],
    products: [
        // The modules' API is `package`: nothing outside this package links them.
        .executable(name: "cenariusd", targets: ["cenariusd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // Without the JSON trait: its snapshot needs Foundation and ICU (ConfigFileSnapshot reads the file).
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", from: "1.7.0"),
        // The tracing API only; the tracer and its OTLP export are ours (Sources/Telemetry, docs/decisions.md).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        // Swift cannot call the variadic curl_easy_setopt; one typed C function per argument kind.
        // libcurl itself is loaded on first use (see ccurl.h); its headers come from libcurl4-openssl-dev.
        .target(
            name: "CCurl",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // libzstd for compressed forms and patches (B8), loaded on first use like libcurl (czstd.h);
        // its header comes from libzstd-dev.
        .target(
            name: "CZstd",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // Starts loading libcurl before Swift's main for the commands that download (startup.c).
        .target(name: "CStartup", dependencies: ["CCurl"]),
        // MD5 of sixteen files at once with AVX-512 (eight with AVX2), for verifying downloads and hashing folders.
        .target(name: "CMultiMD5"),
        // syncfs and zlib's gzip wrapper, which Swift cannot reach directly.
        .target(name: "CPlatform", linkerSettings: [.linkedLibrary("z")]),
        .target(
            name: "RouteSync",
            dependencies: [
                "CMultiMD5",
                "CZstd",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Every request, through libcurl (the C shim): documents, files, resumes, uploads' transport.
        .target(
            name: "Transport",
            dependencies: ["RouteSync", "CCurl"]
        ),
        .target(
            name: "ResourceCache",
            dependencies: [
                "RouteSync", "Transport",
                "ReportHeader",
                "CPlatform",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // Traces over OTLP/HTTP through libcurl: a tracer for swift-distributed-tracing, its queue and exporter.
        .target(
            name: "Telemetry",
            dependencies: [
                "RouteSync", "Transport",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "Daemon",
            dependencies: [
                "RouteSync", "Transport",
                "ResourceCache",
                "Telemetry",
                "ReportHeader",
                "CPlatform",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The Cenarius-Report header every poll carries (RFC 9651, written and read with apple's
        // structured-headers library): below the sync that sends it and the fleet command that reads it.
        .target(
            name: "ReportHeader",
            dependencies: [
                "RouteSync",
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
            ]
        ),
        // The publisher's side: destinations (folders, S3-compatible stores through libcurl's
        // SigV4), what a remote holds, and the order a release is uploaded in.
        .target(
            name: "Publishing",
            dependencies: [
                "RouteSync", "Transport",
                "CCurl",
            ]
        ),
        // Fleet visibility: what `cenariusd fleet` makes of the origin's access logs.
        .target(
            name: "Fleet",
            dependencies: [
                "RouteSync",
                "ReportHeader",
                "CPlatform",
            ]
        ),
        // The settings table and the two ways of reading it (fast, and swift-configuration's).
        .target(
            name: "Settings",
            dependencies: [
                "RouteSync",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // What the settings' values mean for a device and its daemon: the sync's settings, the
        // trial, the install policies, and what a SIGHUP hands the running daemon.
        .target(
            name: "DeviceSettings",
            dependencies: [
                "Settings", "RouteSync", "Transport", "ResourceCache", "Daemon", "Telemetry", "ReportHeader",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "cenariusd",
            dependencies: [
                "DeviceSettings",
                "RouteSync",
                "Transport",
                "ResourceCache",
                "Daemon",
                "Telemetry",
                "Settings",
                "Fleet",
                "ReportHeader",
                "Publishing",
                "CStartup",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The toolchain's static link exports every symbol of the package's own objects
            // (27,000), and at each start the runtime's dladdr walks them all to find its own
            // path: `resolve` took 8.2 ms with them and 5.9 ms without (hyperfine, 150 runs).
            // A release build is the one users install (F in docs/guarantees.md; `make release`
            // adds --static-swift-stdlib: a dynamic runtime costs 6 ms per start): stripped,
            // identical functions folded, and not position-independent, which drops 1.6 MB of
            // relocations and the start-up work of applying them (26.2 → 24.3 MB). Folding all
            // identical functions, not only those whose address is never taken, as Apple's linker
            // does by default for Swift (nothing here compares function addresses): 25.03 → 24.97 MB.
            linkerSettings: [
                .unsafeFlags(["-Xlinker", "--no-export-dynamic"]),
                .unsafeFlags(
                    ["-Xlinker", "--strip-all", "-Xlinker", "--icf=all", "-Xclang-linker", "-no-pie"],
                    .when(configuration: .release)
                ),
            ]
        ),
        // `make man`: the man pages, from `cenariusd --experimental-dump-help` (the command tree),
        // the exit codes and the settings table; a build tool, never installed.
        .executableTarget(
            name: "cenariusd-manual",
            dependencies: [
                "RouteSync",
                "Settings",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/ManualPages"
        ),
        // libFuzzer targets (see Fuzz/run). Built normally they replay a corpus; built with
        // -sanitize=fuzzer -DFUZZING they are fuzzers.
        .target(name: "FuzzSupport", dependencies: ["RouteSync"], path: "Fuzz/FuzzSupport"),
        .executableTarget(name: "FuzzRouteTable", dependencies: ["RouteSync", "FuzzSupport"], path: "Fuzz/FuzzRouteTable"),
        .executableTarget(name: "FuzzURIPath", dependencies: ["RouteSync", "FuzzSupport"], path: "Fuzz/FuzzURIPath"),
        .executableTarget(name: "FuzzRequestPath", dependencies: ["RouteSync", "Daemon", "FuzzSupport"], path: "Fuzz/FuzzRequestPath"),
        // The parsers of numbers and text from outside (G5): each listed in Fuzz/targets.
        .executableTarget(name: "FuzzReleaseManifest", dependencies: ["RouteSync", "FuzzSupport"], path: "Fuzz/FuzzReleaseManifest"),
        .executableTarget(name: "FuzzSignature", dependencies: ["RouteSync", "FuzzSupport"], path: "Fuzz/FuzzSignature"),
        .executableTarget(name: "FuzzResponseHeaders", dependencies: ["RouteSync", "Transport", "FuzzSupport"], path: "Fuzz/FuzzResponseHeaders"),
        .executableTarget(name: "FuzzControlBody", dependencies: ["RouteSync", "Daemon", "FuzzSupport"], path: "Fuzz/FuzzControlBody"),
        .executableTarget(name: "FuzzConfigFile", dependencies: ["RouteSync", "Settings", "FuzzSupport"], path: "Fuzz/FuzzConfigFile"),
        .executableTarget(name: "FuzzReleaseHead", dependencies: ["RouteSync", "FuzzSupport"], path: "Fuzz/FuzzReleaseHead"),
        .executableTarget(name: "FuzzCacheRecords", dependencies: ["RouteSync", "Transport", "ResourceCache", "FuzzSupport"], path: "Fuzz/FuzzCacheRecords"),
        .executableTarget(name: "FuzzS3Listing", dependencies: ["Publishing", "FuzzSupport"], path: "Fuzz/FuzzS3Listing"),
        .executableTarget(name: "FuzzDBusMessage", dependencies: ["Daemon", "FuzzSupport"], path: "Fuzz/FuzzDBusMessage"),
        .executableTarget(name: "FuzzTimeWindow", dependencies: ["ResourceCache", "FuzzSupport"], path: "Fuzz/FuzzTimeWindow"),
        .executableTarget(name: "FuzzSolidPack", dependencies: ["RouteSync", "FuzzSupport"], path: "Fuzz/FuzzSolidPack"),
        .executableTarget(name: "FuzzTraceContext", dependencies: ["Telemetry", "FuzzSupport"], path: "Fuzz/FuzzTraceContext"),
        .testTarget(
            name: "SettingsTests",
            dependencies: ["Settings", "DeviceSettings", "RouteSync", "Transport", "ResourceCache", "Daemon"]
        ),
        .testTarget(
            name: "RouteSyncTests",
            dependencies: ["RouteSync", "Transport"]
        ),
        .testTarget(
            name: "PublishingTests",
            dependencies: ["Publishing", "RouteSync", "Transport"]
        ),
        .testTarget(
            name: "FleetTests",
            dependencies: ["Fleet", "ReportHeader", "RouteSync"]
        ),
        .testTarget(
            name: "ResourceCacheTests",
            dependencies: ["ResourceCache", "RouteSync", "Transport", "TestOrigin"]
        ),
        .target(name: "CTestStartup", path: "Tests/CTestStartup"),
        .target(
            name: "TestOrigin",
            dependencies: [
                "CTestStartup",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/TestOrigin"
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["TestOrigin", "RouteSync", "Settings", "ResourceCache"]
        ),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "TestOrigin", "Daemon", "ResourceCache", "RouteSync", "Transport", "Telemetry",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ]
)

// In-process lookup benchmark (B4: in-daemon lookup ≤ 5 µs), built only when CENARIUS_BENCHMARKS=1
// (see bench/lookup), so that `swift build` and `swift test` neither fetch nor build
// ordo-one/benchmark. Only the MallocInterposer trait is enabled: with the default traits,
// benchmark 1.38.1 on Linux with Swift 6.3 also needs ordo-one/swift-runtime-interposer.
if ProcessInfo.processInfo.environment["CENARIUS_BENCHMARKS"] == "1" {
    package.dependencies += [
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ]
    package.targets += [
        .executableTarget(
            name: "LookupBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "ResourceCache",
                "RouteSync",
            ],
            path: "Benchmarks/LookupBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
}

// The upcoming-feature settings hummingbird builds with: existentials spelled `any`, a member
// visible only where its module is imported, and imports internal unless a file says otherwise
// (a module's types reach its package API only through a `package import`).
// The release binary must stay under F's 25 MB: `make release` builds every Swift module, the
// dependencies' too, with -Osize (Makefile, docs/decisions.md); a plain `swift build -c release`
// of these modules gets it as well.
for target in package.targets where ["cenariusd", "Settings", "DeviceSettings", "Fleet", "ReportHeader", "ResourceCache", "RouteSync", "Transport", "Daemon", "Publishing", "Telemetry"].contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Osize"], .when(configuration: .release))]
}

for target in package.targets where !["CCurl", "CMultiMD5", "CPlatform", "CStartup", "CTestStartup", "CZstd"].contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
