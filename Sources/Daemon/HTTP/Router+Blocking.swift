import NIOPosix
import RouteSync

extension DaemonRouter {
    /// File reads, gzip (up to 16 MiB) and cache inspection run on NIO's thread pool for
    /// blocking work, as hummingbird does: on Swift concurrency's few shared threads they
    /// would hold up every other request and the scheduler while they run.
    func blocking<T: Sendable>(_ body: @escaping @Sendable () throws(CenariusError) -> T) async throws(CenariusError) -> T {
        let result: Result<T, CenariusError>
        do {
            result = try await NIOThreadPool.singleton.runIfActive { Result { () throws(CenariusError) in try body() } }
        } catch {
            throw .internal("the daemon is shutting down: \(error)")
        }
        return try result.get()
    }
}
