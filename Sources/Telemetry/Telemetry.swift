import RouteSync
import Synchronization
import Tracing
import Transport

/// Traces for the process, when a collector is configured: `start` makes the tracer the one the
/// tracing API hands every span to (once per process, as `InstrumentationSystem` allows), and
/// `shutdown` sends what is left. Without an endpoint nothing is made and every span is the
/// tracing API's no-op: no cost to a device that does not trace.
package final class Telemetry: Sendable {
    private let exporter: SpanExporter
    private let queue: SpanQueue
    private let sampler: SamplerSwitch
    private let background: Bool

    private init(settings: TraceSettings, background: Bool) {
        queue = SpanQueue(capacity: settings.queueSize)
        self.background = background
        sampler = SamplerSwitch(settings.sampler)
        exporter = SpanExporter(SpanExporter.Target(settings, timeout: Self.timeout(background)), queue: queue)
    }

    /// The daemon's exports run on their own thread: a hanging collector holds it 5 s, then the
    /// next try. A command's one export is at its exit: 1 s to connect, 2 s in all.
    private static func timeout(_ background: Bool) -> Int { background ? 5 : 1 }

    /// The process's telemetry; nil when `settings` is (no endpoint configured). `background`:
    /// exports every few seconds from a thread of their own (the daemon); else once, at `shutdown`.
    package static func start(_ settings: TraceSettings?, background: Bool = true) -> Telemetry? {
        guard let settings else { return nil }
        let telemetry = Telemetry(settings: settings, background: background)
        InstrumentationSystem.bootstrap(SpanTracer(sampler: telemetry.sampler, queue: telemetry.queue, exporter: telemetry.exporter))
        if background { telemetry.exporter.start() }
        return telemetry
    }

    /// A reload's settings: another collector, headers or sampler from the next span on; nil turns
    /// traces off (what is queued is dropped, uncounted: nobody asked for it any more).
    package func reconfigure(_ settings: TraceSettings?) {
        guard let settings else {
            sampler.current = nil
            _ = queue.take(.max)
            return
        }
        exporter.retarget(SpanExporter.Target(settings, timeout: Self.timeout(background)))
        sampler.current = settings.sampler
    }

    package func shutdown(timeout: Double = 3) {
        if background { exporter.shutdown(timeout: timeout) } else { exporter.exportNow() }
    }
}

/// The daemon's telemetry across reloads (`serve`, SIGHUP): made when a collector is first
/// named, at start or by a reload, then reconfigured; never made while none is.
package final class TelemetryControl: Sendable {
    private let current = Mutex<Telemetry?>(nil)

    package init(_ settings: TraceSettings?) {
        apply(settings)
    }

    package func apply(_ settings: TraceSettings?) {
        current.withLock { telemetry in
            if let telemetry { telemetry.reconfigure(settings) } else { telemetry = Telemetry.start(settings) }
        }
    }

    package func shutdown() {
        current.withLock { $0 }?.shutdown()
    }
}
