// B4: "in-daemon lookup ≤ 5 µs". Run with bench/lookup (CENARIUS_BENCHMARKS=1 swift package benchmark).
//
// The fixture is a real cache: 20,000 small files in a file:// remote folder, its Routes.json made
// by RouteTableBuilder (as `cenariusd routes` does), synced by Syncer into a fresh cache with an
// empty preset, so the current generation holds every file (`source: cache`). It is built once per
// process, on the first benchmark's setup, and removed when the process exits.
//
// Each benchmark iteration does 1,000 lookups (scalingFactor .kilo), so the figures printed are
// per lookup.

import Benchmark
import Foundation
import ResourceCache
import RouteSync

private let entryCount = 20_000
/// Lookups cycle through this many uris spread over the table (a power of two).
private let sampleCount = 1_024

private final class LookupFixture: Sendable {
    let root: String
    let settings: SyncSettings
    /// uris held in the current generation, spread evenly over the table.
    let held: [String]
    /// uris shaped like the table's but absent from it.
    let absent: [String]

    static func uri(_ i: Int) -> String { "t/d\(i % 100)/f\(String(format: "%05d", i)).js" }

    init() throws {
        root = NSTemporaryDirectory() + "cenarius-lookup-bench-\(getpid())"
        let fm = FileManager.default
        try? fm.removeItem(atPath: root)
        let remote = root + "/remote"
        try fm.createDirectory(atPath: root + "/preset", withIntermediateDirectories: true)
        for folder in 0..<100 {
            try fm.createDirectory(atPath: remote + "/t/d\(folder)", withIntermediateDirectories: true)
        }
        // Small files (40-400 bytes) of distinct content, like `bench/corpus.py tiny`.
        var generator = SplitMix64(seed: 3)
        for i in 0..<entryCount {
            let size = 40 + Int(generator.next() % 361)
            var bytes = Array("\(i)\n".utf8)
            while bytes.count < size { bytes.append(UInt8(truncatingIfNeeded: generator.next())) }
            guard fm.createFile(atPath: remote + "/" + Self.uri(i), contents: Data(bytes)) else {
                throw CenariusError(.storage, "cannot write \(remote)/\(Self.uri(i))")
            }
        }
        let built = try RouteTableBuilder(root: remote).build()
        guard built.table.count == entryCount else {
            throw CenariusError(.internal, "table has \(built.table.count) entries, expected \(entryCount)")
        }
        try FileSystem.writeAtomically(built.table.serialized(), to: remote + "/Routes.json", durable: false)

        settings = SyncSettings(
            remote: try Remote("file://" + remote),
            cache: CacheLayout(root: root + "/cache"),
            preset: Preset(root: root + "/preset"))
        let report = try Syncer(settings: settings).sync()
        guard let generation = GenerationStore(layout: settings.cache).current() else {
            throw CenariusError(.internal, "sync made no current generation: \(report)")
        }
        // The copies are no longer needed: every lookup is answered from the cache.
        try? fm.removeItem(atPath: remote)

        let stride = entryCount / sampleCount
        held = (0..<sampleCount).map { Self.uri($0 * stride + 7) }
        absent = (0..<sampleCount).map { "t/d\($0 % 100)/missing\(String(format: "%05d", $0)).js" }

        // Check the fixture answers as the benchmarks expect before measuring anything.
        let resolver = Resolver(settings: settings, tables: TableCache())
        let hit = try resolver.resolve(held[0], options: .init(offline: true))
        guard hit.source == .cache, !hit.stale else {
            throw CenariusError(.internal, "expected a cache hit, got \(hit.jsonText())")
        }
        var missCode = CenariusError.Code.ok
        do { _ = try resolver.resolve(absent[0], options: .init(offline: true)) } catch { missCode = error.code }
        guard missCode == .notFound else {
            throw CenariusError(.internal, "expected notFound for \(absent[0]), got \(missCode)")
        }
        print("lookup fixture: \(entryCount) entries, generation \(generation.number), \(root)")
    }

    nonisolated(unsafe) static var shared: LookupFixture?

    static func setUp() throws {
        if shared == nil {
            shared = try LookupFixture()
            atexit { LookupFixture.shared.map { try? FileManager.default.removeItem(atPath: $0.root) } }
        }
    }
}

/// A tiny deterministic generator (the fixture is the same on every run).
private struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )
    // Runs before each benchmark; the fixture is built on the first call only.
    Benchmark.setup = { try LookupFixture.setUp() }

    // The daemon's lookup: a Resolver with a TableCache (parsed table kept between lookups),
    // offline, as Router.lookup calls it.
    Benchmark("daemon lookup, held in cache (TableCache)") { benchmark in
        let fixture = LookupFixture.shared!
        let resolver = Resolver(settings: fixture.settings, tables: TableCache())
        _ = try? resolver.resolve(fixture.held[0], options: .init(offline: true))  // parse the table outside the measurement
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            blackHole(try? resolver.resolve(fixture.held[i & (sampleCount - 1)], options: .init(offline: true)))
        }
        benchmark.stopMeasurement()
    }

    Benchmark("daemon lookup, not in table (notFound)") { benchmark in
        let fixture = LookupFixture.shared!
        let resolver = Resolver(settings: fixture.settings, tables: TableCache())
        _ = try? resolver.resolve(fixture.held[0], options: .init(offline: true))
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            do {
                blackHole(try resolver.resolve(fixture.absent[i & (sampleCount - 1)], options: .init(offline: true)))
            } catch {
                blackHole(error)
            }
        }
        benchmark.stopMeasurement()
    }

    // The `cenariusd resolve` path: no TableCache, so the generation's index is searched by mmap.
    Benchmark("CLI lookup, held in cache (GenerationIndex mmap)") { benchmark in
        let fixture = LookupFixture.shared!
        let resolver = Resolver(settings: fixture.settings)
        for i in benchmark.scaledIterations {
            blackHole(try? resolver.resolve(fixture.held[i & (sampleCount - 1)], options: .init(offline: true)))
        }
    }

    Benchmark("CLI lookup, not in table (GenerationIndex mmap)") { benchmark in
        let fixture = LookupFixture.shared!
        let resolver = Resolver(settings: fixture.settings)
        for i in benchmark.scaledIterations {
            do {
                blackHole(try resolver.resolve(fixture.absent[i & (sampleCount - 1)], options: .init(offline: true)))
            } catch {
                blackHole(error)
            }
        }
    }
}
