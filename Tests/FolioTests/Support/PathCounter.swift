import Foundation

/// Counts paths, from any thread.
final class PathCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var paths: [String] = []

    func add(_ path: String) { lock.withLock { paths.append(path) } }
    var count: Int { lock.withLock { paths.count } }
    var all: [String] { lock.withLock { paths } }
    func reset() { lock.withLock { paths = [] } }
}
