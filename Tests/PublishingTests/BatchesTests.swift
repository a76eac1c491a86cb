@testable import Publishing
import Testing

/// What a store is sent or asked for at once (`Array.batches`): the uploads, the reads and the
/// patch bases all go through it.
struct BatchesTests {
    @Test func slicesCloseAtTheirCountOrOnceTheirBytesReachTheLimit() {
        let sizes: [Int64] = [10, 10, 10, 50, 1, 1, 200, 3]
        let slices = sizes.batches(count: 3, bytes: 30) { $0 }
        // 10+10+10 reaches 30; 50 alone reaches it; 1, 1 and the 200 that takes it over (a large one is not
        // split from those before it, as the loops it replaced did); the rest.
        #expect(slices.map(Array.init) == [[10, 10, 10], [50], [1, 1, 200], [3]])
        #expect(Array(0..<130).batches().map(\.count) == [64, 64, 2])
        #expect([Int]().batches().isEmpty)
    }
}
