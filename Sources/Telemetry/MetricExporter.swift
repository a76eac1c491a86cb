import Dispatch
import RouteSync
import Synchronization
import Tracing
import Transport

/// Sends the daemon's metrics to an OTLP collector every interval, from a thread of its own,
/// through libcurl as the spans are (`HTTPPost`). The figures are read from `GET /metrics`'s own
/// exposition at each export (`MetricFamily.parse`), so both say the same. They are cumulative:
/// an export the collector missed (down, slow, refusing) loses nothing the next one does not
/// carry, so a failed export is simply not retried. Nothing here is on a sync's path.
package final class MetricExporter: Sendable {
    /// What the exporter sends: the daemon's exposition, set once it runs.
    private let collect = Mutex<(@Sendable () -> [UInt8])?>(nil)
    /// Where exports go; nil: nowhere (a reload took the collector away).
    private let target: Mutex<Target?>
    private let started = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    /// The counters' start: the daemon's.
    private let start = DefaultTracerClock.now.nanosecondsSinceEpoch

    private struct Target: Sendable {
        var endpoint: String
        var options: TransferOptions
        var interval: Double
        var resource: [(key: String, value: SpanAttribute)]
    }

    package init(_ settings: MetricSettings?) {
        target = Mutex(settings.map(Self.target))
    }

    private static func target(_ settings: MetricSettings) -> Target {
        Target(endpoint: settings.endpoint,
               options: .collector(settings.endpoint, headers: settings.headers, caFile: settings.caFile, timeout: 5),
               interval: settings.interval, resource: settings.resource.map { (key: $0.key, value: SpanAttribute.string($0.value)) })
    }

    /// The daemon's exposition; exports begin once a collector is named.
    package func attach(_ exposition: @escaping @Sendable () -> [UInt8]) {
        collect.withLock { $0 = exposition }
        startIfNamed()
    }

    /// A reload's collector, from the next export on; nil stops the exports.
    package func apply(_ settings: MetricSettings?) {
        target.withLock { $0 = settings.map(Self.target) }
        wake.signal()
        startIfNamed()
    }

    /// The thread starts with the first collector named, never before: no cost without one.
    private func startIfNamed() {
        guard target.withLock({ $0 != nil }), collect.withLock({ $0 != nil }),
              started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        DispatchQueue(label: "cenariusd.metric-export").async { [self] in
            while true {
                let interval = target.withLock { $0?.interval } ?? 60
                if wake.wait(timeout: .now() + interval) == .timedOut { exportNow() }
            }
        }
    }

    /// One export of every figure as of now.
    private func exportNow() {
        guard let target = target.withLock({ $0 }), let exposition = collect.withLock({ $0 }) else { return }
        let body = OTLPMetricsJSON.request(MetricFamily.parse(exposition()), resource: target.resource, scopeVersion: CenariusVersion.string,
                                           start: start, now: DefaultTracerClock.now.nanosecondsSinceEpoch)
        _ = HTTPPost.send(target.endpoint, body: body, contentType: "application/json", options: target.options)
    }
}

extension TransferOptions {
    /// A collector's: its headers to its host alone, its CA bundle, `timeout` seconds to connect.
    static func collector(_ endpoint: String, headers: [String], caFile: String?, timeout: Int) -> TransferOptions {
        var options = TransferOptions()
        options.headers = headers
        if let host = Remote.authority(of: endpoint) { options.headerHosts = [host] }
        options.caFile = caFile
        options.timeout = timeout
        return options
    }
}
