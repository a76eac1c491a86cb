import ResourceCache
import Tracing

/// A trial as one span (docs/telemetry.md): from the switch that put a generation on trial to its
/// confirmation or its rollback, whose reason (`timeout`, `health`, …) it ends with. A trial the
/// daemon resumes after a restart is a new span, marked resumed.
struct TrialTrace {
    private var open: (generation: Int, span: any Span)?

    mutating func started(_ trial: ReleaseState.Trial, previous: Int?, resumed: Bool) {
        end("replaced")
        let span = startSpan("cenarius.trial", context: .topLevel)
        span.updateAttributes { attributes in
            attributes["cenarius.generation"] = trial.generation
            attributes["cenarius.trial.fallback"] = previous.map(String.init) ?? "preset"
            attributes["cenarius.trial.resumed"] = resumed
        }
        open = (trial.generation, span)
    }

    mutating func confirmed(_ generation: Int) {
        guard open?.generation == generation else { return }
        end("confirmed")
    }

    mutating func rolledBack(_ record: ReleaseState.RollbackRecord) {
        guard let (generation, span) = open, generation == record.from else { return }
        span.attributes["cenarius.rollback.to"] = record.to.map(String.init) ?? "preset"
        span.setStatus(SpanStatus(code: .error, message: record.detail))
        end("rolled-back: " + record.reason.rawValue)
    }

    /// `confirmed`, `rolled-back: REASON`, or what stopped watching it.
    mutating func end(_ how: String) {
        guard let (_, span) = open else { return }
        span.attributes["cenarius.trial.end"] = how
        span.end()
        open = nil
    }
}
