internal import Foundation

/// A query result kept current in the background, for code that cannot iterate an async sequence:
/// read ``snapshot`` whenever you need the result; it is never older than the last change that
/// was announced.
///
/// ```swift
/// let today = try await store.liveQuery(Query<Todo>(.day("2026-11-22")))
/// widget.render(today.snapshot)      // synchronous, from any thread
/// ```
///
/// It stops updating when cancelled, when released, or when the store closes.
public final class LiveQuery<E: Entity>: @unchecked Sendable {
    private let lock = NSLock()
    private var current: [E] = []
    private var failure: (any Error)?
    private var updates = 0
    private var task: Task<Void, Never>?

    init() {}

    deinit { task?.cancel() }

    /// The latest result.
    public var snapshot: [E] { lock.withLock { current } }

    /// Why it stopped updating, if a query failed (the snapshot keeps the last good result).
    public var error: (any Error)? { lock.withLock { failure } }

    /// How many results it has received, the first one included: a cheap way to tell whether
    /// ``snapshot`` changed since you last looked.
    public var version: Int { lock.withLock { updates } }

    /// Stops updating. The snapshot keeps its last value.
    public func cancel() {
        lock.withLock { task }?.cancel()
    }

    fileprivate func start(_ stream: AsyncThrowingStream<[E], any Error>) async throws {
        try await withCheckedThrowingContinuation { (first: CheckedContinuation<Void, any Error>) in
            let task = Task { [weak self] in
                var waiting: CheckedContinuation<Void, any Error>? = first
                do {
                    for try await result in stream {
                        guard let self else { break }
                        self.lock.withLock {
                            self.current = result
                            self.updates += 1
                        }
                        waiting?.resume()
                        waiting = nil
                    }
                    waiting?.resume(throwing: FolioError(.storeClosed, "the store closed before the query was answered"))
                } catch {
                    self?.lock.withLock { self?.failure = error }
                    waiting?.resume(throwing: error)
                }
            }
            lock.withLock { self.task = task }
        }
    }
}

extension Store {
    /// A query result kept current in the background; see ``LiveQuery``.
    /// - Parameter query: The query to keep answering.
    /// - Returns: The live query, with its first result already in ``LiveQuery/snapshot``.
    /// - Throws: ``FolioError`` if the first answer fails.
    public nonisolated func liveQuery<E: Entity>(_ query: Query<E>) async throws -> LiveQuery<E> {
        let live = LiveQuery<E>()
        try await live.start(observe(query))
        return live
    }
}
