import Folio
import Foundation

/// Folio's side of row 10, each run in a fresh child process (Children/ChildMain+TenYears.swift)
/// on the shared ten-year store, through the public API only.
extension FolioContender {
    /// The first query of a fresh process over every partition: open (not timed), then
    /// `Query<Todo>(.all, where: title contains word && !done)`, the entities decoded as `Todo`.
    /// Returns the query's time and how many todos matched.
    static func scan(_ folder: URL, word: String) async throws -> (Duration, Int) {
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        let query = Query<Todo>(.all, where: #Predicate { $0.title.contains(word) && !$0.done })
        let start = ContinuousClock.now
        let matches = try await store.fetch(query)
        let elapsed = ContinuousClock.now - start
        try await store.close()
        return (elapsed, matches.count)
    }

    /// One one-day query per day, oldest first, in a fresh process: open (not timed), then every
    /// day. Returns the time of the queries and how many todos they read.
    static func readEveryDay(_ folder: URL, days: [String]) async throws -> (Duration, Int) {
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        var read = 0
        let start = ContinuousClock.now
        for day in days { read += try await store.fetch(Query<Todo>(.day(day))).count }
        let elapsed = ContinuousClock.now - start
        try await store.close()
        return (elapsed, read)
    }

    /// Open + `get` of one todo by id (its partition unknown to the caller), as a fresh process
    /// does it. Returns the time and the todo, if found.
    static func openAndGet(_ folder: URL, id: String) async throws -> (Duration, Todo?) {
        let start = ContinuousClock.now
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        let todo = try await store.get(Todo.self, id: id)
        let elapsed = ContinuousClock.now - start
        try await store.close()
        return (elapsed, todo)
    }

    /// What a widget does: open the store and read today's todos. Runs `measure` (the process's
    /// peak memory) before closing, and returns the todos read.
    static func widget(_ folder: URL, today: String, measure: () -> Int) async throws -> (Int, Int) {
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        let todos = try await store.fetch(Query<Todo>(.day(today)))
        let peak = measure()
        try await store.close()
        return (todos.count, peak)
    }
}
