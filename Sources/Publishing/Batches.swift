extension Array {
    /// Consecutive slices of at most `count` elements, each closed once its `size`s reach `bytes`
    /// (so one element larger than that is a slice of its own): what a store is sent or asked for
    /// at once, so that no more than a slice's bodies are in memory together.
    func batches(count: Int = 64, bytes: Int64 = 64 << 20, size: (Element) -> Int64 = { _ in 0 }) -> [ArraySlice<Element>] {
        var slices: [ArraySlice<Element>] = []
        var start = startIndex
        while start < endIndex {
            var end = start
            var total: Int64 = 0
            while end < endIndex, end - start < count, total < bytes {
                total += size(self[end])
                end += 1
            }
            slices.append(self[start..<end])
            start = end
        }
        return slices
    }
}
