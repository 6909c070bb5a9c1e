import Foundation

/// Collects what an async sequence yields, in the background, so a test can wait for a count
/// (bounded in time) and then look at everything that came, in order.
final class Collector<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Element] = []
    private var failure: (any Error)?
    private var ended = false
    private var task: Task<Void, Never>?

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        task = Task {
            do {
                for try await element in sequence { self.lock.withLock { self.stored.append(element) } }
            } catch {
                self.lock.withLock { self.failure = error }
            }
            self.lock.withLock { self.ended = true }
        }
    }

    var items: [Element] { lock.withLock { stored } }
    var error: (any Error)? { lock.withLock { failure } }
    var hasEnded: Bool { lock.withLock { ended } }

    func cancel() { task?.cancel() }

    /// Waits until `condition` holds for the items (at most `seconds`); returns whether it did.
    @discardableResult
    func wait(seconds: Double = 15, until condition: ([Element]) -> Bool) async -> Bool {
        for _ in 0..<Int(seconds * 200) {
            if condition(items) { return true }
            do { try await Task.sleep(for: .milliseconds(5)) } catch { break }
        }
        return condition(items)
    }

    /// Waits until at least `count` items came.
    @discardableResult
    func wait(forCount count: Int, seconds: Double = 15) async -> Bool {
        await wait(seconds: seconds) { $0.count >= count }
    }

    /// Waits for the sequence to end.
    @discardableResult
    func waitForEnd(seconds: Double = 15) async -> Bool {
        for _ in 0..<Int(seconds * 200) {
            if hasEnded { return true }
            do { try await Task.sleep(for: .milliseconds(5)) } catch { break }
        }
        return hasEnded
    }
}
