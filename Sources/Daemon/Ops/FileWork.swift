import NIOCore
import NIOPosix

/// The executor of the daemon's actors whose work is the cache's files (`ReleaseSupervisor`,
/// `RolloutWatch`, `SyncCoordinator`, `ReportStore`): one NIO event loop thread of their own.
/// Their file work is short but blocking — a lock that may wait behind another process, fsync, a
/// table read — and on Swift's shared pool, which has as many threads as cores (two here), it
/// would hold up the HTTP server and the scheduler meanwhile. On this thread it waits only for
/// the other actors' file work. Work that lasts (a sync, a switch back behind a sync's writer
/// lock, a health check) goes further, to a thread of its own (`onThread`); the HTTP path's file
/// reads go to NIO's thread pool (`DaemonRouter.blocking`).
enum FileWork {
    /// For the life of the process: the daemon is the process, and tests start several daemons in one.
    static let loop: any EventLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()

    static var executor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }
}
