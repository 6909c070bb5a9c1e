#if canImport(Observation)
public import Observation

/// A query result as an `@Observable` main-actor object, for SwiftUI: views that read
/// ``results`` update when it changes.
///
/// ```swift
/// struct TodayView: View {
///     @State private var today = ObservedQuery(Query<Todo>(.day("2026-11-22")), in: store)
///     var body: some View { List(today.results) { Text($0.title) } }
/// }
/// ```
///
/// It observes until it is released (or the store closes).
@Observable @MainActor
public final class ObservedQuery<E: Entity> {
    /// The latest result (empty until the first one arrives).
    public private(set) var results: [E] = []
    /// Whether the first result has arrived.
    public private(set) var isLoaded = false
    /// Why observation stopped, if the query failed; ``results`` keeps the last good result.
    public private(set) var error: (any Error)?

    @ObservationIgnored private nonisolated(unsafe) var task: Task<Void, Never>?

    /// Starts observing.
    /// - Parameters:
    ///   - query: The query to keep answering.
    ///   - store: The store to observe.
    public init(_ query: Query<E>, in store: Store) {
        let stream = store.observe(query)
        task = Task { [weak self] in
            do {
                for try await results in stream {
                    guard let self else { return }
                    self.results = results
                    self.isLoaded = true
                }
            } catch {
                self?.error = error
            }
        }
    }

    deinit { task?.cancel() }
}
#endif
