internal import Foundation

/// A tiny lock for the few bits of process-wide state (counters) that live outside actors.
final class NSLockShim: @unchecked Sendable {
    private let lock = NSLock()

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
