import Dispatch
import Synchronization

/// Values passed from one thread to another, first in first out; `take` waits for one.
final class Handoff<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    private let available = DispatchSemaphore(value: 0)

    func put(_ item: Element) {
        items.withLock { $0.append(item) }
        available.signal()
    }

    func take() -> Element {
        available.wait()
        return items.withLock { $0.removeFirst() }
    }
}
