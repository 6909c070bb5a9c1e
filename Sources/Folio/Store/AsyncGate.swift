/// A first-come, first-served turn for async callers inside one actor (not thread-safe on its own:
/// use it only from the owning actor).
struct AsyncGate {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    var isHeld: Bool { held }

    /// Returns true if the turn was taken at once; otherwise the caller must `await` via `enqueue`.
    mutating func tryEnter() -> Bool {
        if held { return false }
        held = true
        return true
    }

    mutating func enqueue(_ continuation: CheckedContinuation<Void, Never>) {
        waiters.append(continuation)
    }

    /// Hands the turn to the next waiter, or frees it.
    mutating func leave() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
