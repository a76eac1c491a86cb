import NIOCore

extension HTTPConnection {
    /// Where a connection is in its life, what it owes and what it may still take, and the
    /// decision at each event; HTTPConnection carries the decisions out on its channel. Shaped
    /// after hummingbird's HTTP2ServerConnectionManager+StateMachine: every transition is here,
    /// so that what the channel does is a function of this value (HTTPConnectionStateTests).
    struct StateMachine {
        enum Phase {
            /// Taking requests.
            case open
            /// No more requests are taken (shutdown, or unreadable input); what is owed is
            /// answered, the last reply says `Connection: close`, then it closes.
            case stopping
            /// Carries an event stream and nothing else.
            case streaming(StreamingState)
            /// Asked to close; nothing more is read.
            case closing
            /// The channel went inactive: nothing more is written either.
            case closed
        }

        private(set) var phase = Phase.open
        /// A reply is being computed off the event loop; later requests wait behind it.
        private(set) var busy = false
        /// Requests read whole, behind the reply being computed (pipelining, in order).
        private(set) var waiting = CircularBuffer<PendingRequest>()
        private(set) var readingPaused = false
        /// Anything was read since the last idle check.
        private var activeSinceCheck = true

        var takesRequests: Bool { if case .open = phase { true } else { false } }
        var isStreaming: Bool { if case .streaming = phase { true } else { false } }
        private var isClosingOrClosed: Bool {
            switch phase {
            case .closing, .closed: true
            default: false
            }
        }
        private var owesNothing: Bool { !busy && waiting.isEmpty }

        mutating func read() { activeSinceCheck = true }

        enum RequestAction { case handle(PendingRequest), wait, waitAndPauseReading }

        /// A request has been read whole.
        mutating func received(_ request: PendingRequest) -> RequestAction {
            guard owesNothing else {
                waiting.append(request)
                guard waiting.count >= HTTPConnection.maxWaiting, !readingPaused else { return .wait }
                readingPaused = true
                return .waitAndPauseReading
            }
            return .handle(request)
        }

        mutating func replyStarted() { busy = true }

        /// The computed reply is ready: whether it can still be written.
        mutating func replyComputed() -> Bool {
            busy = false
            if case .closed = phase { return false }
            return true
        }

        /// The next request that waited, when it may be answered now.
        mutating func nextWaiting() -> PendingRequest? {
            guard !busy, !isClosingOrClosed else { return nil }
            return waiting.popFirst()
        }

        /// Whether reading, paused with too many requests waiting, should resume.
        mutating func resumeReading() -> Bool {
            guard readingPaused, waiting.count < HTTPConnection.maxWaiting / 2, !isClosingOrClosed else { return false }
            readingPaused = false
            return true
        }

        /// A stopping connection that owes nothing closes: true when it should close now.
        mutating func closeIfIdle() -> Bool {
            guard case .stopping = phase, owesNothing else { return false }
            phase = .closing
            return true
        }

        /// Whether a reply to `request` keeps the connection: not the last one of a stopping connection.
        func keepsAlive(_ request: Bool) -> Bool {
            if case .stopping = phase, waiting.isEmpty { return false }
            return request
        }

        /// A reply said `Connection: close`, or an error ends the connection: the stream it
        /// carried, to end (else the stream would stay subscribed, and counted, after the close).
        @discardableResult
        mutating func close() -> StreamingState? {
            if let stream = endStream() { return stream }
            if !isClosingOrClosed { phase = .closing }
            return nil
        }

        enum QuiesceAction { case none, close, closeStream(StreamingState) }

        /// The server shuts down: answer what is owed, take nothing more.
        mutating func quiesce() -> QuiesceAction {
            switch phase {
            case .open, .stopping:
                phase = .stopping
                return closeIfIdle() ? .close : .none
            case .streaming(let stream):
                phase = .closing
                return .closeStream(stream)
            case .closing, .closed:
                return .none
            }
        }

        enum MalformedAction { case refuse, closeIfIdle }

        /// Unreadable input: a 400 when nothing is owed and the client can still read it; otherwise
        /// the requests before it are answered and the connection ends.
        mutating func malformed(connectionClosed: Bool) -> MalformedAction {
            if !connectionClosed, owesNothing, takesRequests { return .refuse }
            if takesRequests { phase = .stopping }
            return .closeIfIdle
        }

        /// A refusal (400, 413) may only be written when no earlier reply is owed: true to write
        /// it, false when the connection is to close instead.
        mutating func mayRefuse() -> Bool {
            if owesNothing { return true }
            close()
            return false
        }

        /// The idle check: true when the connection should close, having been idle since the last one.
        mutating func idleCheck() -> Bool {
            defer { activeSinceCheck = false }
            guard !activeSinceCheck, owesNothing, !isClosingOrClosed, !isStreaming else { return false }
            phase = .closing
            return true
        }

        /// The connection becomes an event stream: requests pipelined behind are dropped.
        mutating func startStream(_ stream: StreamingState) {
            waiting.removeAll()
            phase = .streaming(stream)
        }

        /// The stream to end, if the connection carries one; the connection is then closing.
        mutating func endStream() -> StreamingState? {
            guard case .streaming(let stream) = phase else { return nil }
            phase = .closing
            return stream
        }

        /// The channel went inactive; the stream to end, if any.
        mutating func inactive() -> StreamingState? {
            let stream = endStream()
            phase = .closed
            return stream
        }
    }
}
