import Synchronization
package import Testing

/// Clean-ups a test registers as it goes (shutting an origin down, removing a folder), awaited
/// once the test has ended, whether it passed, failed or threw; in reverse order, as `defer`
/// would run them. `defer { Task { await … } }` was never awaited: the next test could start
/// before an origin had stopped, and the process could end before a folder was removed.
///
///     @Suite(.awaitsCleanups) struct SyncTests {
///         @Test func something() async throws {
///             let origin = try await TestOrigin()
///             Cleanups.add { await origin.shutdown() }
///             …
///         }
///     }
package enum Cleanups {
    @TaskLocal static var current: Bag?

    /// Registers a clean-up for the running test; its suite must have the `.awaitsCleanups` trait.
    package static func add(_ body: @escaping @Sendable () async -> Void) {
        guard let current else { preconditionFailure("Cleanups.add outside a test with the .awaitsCleanups trait") }
        current.add(body)
    }

    package final class Bag: Sendable {
        private let bodies = Mutex<[@Sendable () async -> Void]>([])

        func add(_ body: @escaping @Sendable () async -> Void) {
            bodies.withLock { $0.append(body) }
        }

        func run() async {
            for body in bodies.withLock({ $0.reversed() }) { await body() }
        }
    }
}

/// The trait that gives each test of a suite its bag of clean-ups and awaits them.
package struct AwaitsCleanups: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // One scope per test case; the suite itself needs none.
        testCase == nil ? nil : self
    }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let bag = Cleanups.Bag()
        try await Cleanups.$current.withValue(bag) {
            do {
                try await function()
            } catch {
                await bag.run()
                throw error
            }
            await bag.run()
        }
    }
}

extension Trait where Self == AwaitsCleanups {
    package static var awaitsCleanups: Self { AwaitsCleanups() }
}
