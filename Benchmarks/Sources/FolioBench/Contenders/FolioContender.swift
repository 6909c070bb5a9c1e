import Folio
import Foundation

/// Folio's side of each comparison. Every function starts from a folder it is given and leaves
/// the store closed.
enum FolioContender {
    static func configuration(_ durability: Durability) -> Store.Configuration {
        Store.Configuration(durability: durability)
    }

    /// Fills `folder` with `todos` as data already synced (no outbox commands), checkpointed and
    /// closed. Not timed. No checkpoint runs between the chunks (each is over the default
    /// threshold, and each touches every day file of a ten-year store): the files are written
    /// once, by the checkpoint of `close`.
    static func seed(_ folder: URL, todos: [Todo]) async throws {
        try await seed(folder, entities: todos.map(LocalTodo.init))
    }

    /// Fills `folder` with `entities`, as ``seed(_:todos:)`` does. The first entity is committed
    /// alone: in a store that already has files, until a session's first commit every upsert of an
    /// id looks it up in the saved id index (the whole index file read, every partition file
    /// `stat`ed), which made a first transaction of thousands take tens of seconds; after a commit
    /// the index is built in memory once.
    static func seed<E: Entity>(_ folder: URL, entities: [E]) async throws {
        var seeding = configuration(.relaxed)
        seeding.checkpointThreshold = 1 << 40
        seeding.checkpointDelay = .seconds(3600)
        let store = try await Store.open(at: folder, configuration: seeding)
        var start = 0
        for end in [min(1, entities.count)] + Array(stride(from: 20_001, to: entities.count, by: 20_000)) + [entities.count] where end > start {
            let slice = Array(entities[start..<end])
            start = end
            try await store.write { tx in
                for entity in slice { try tx.upsert(entity) }
            }
        }
        try await store.close()
    }

    /// One transaction per edit (upsert + its outbox command), awaited one after the other; then
    /// the checkpoint that brings the files up to date. Returns both instants.
    static func transactions(_ folder: URL, edits: [Todo], durability: Durability) async throws -> WriteTiming {
        let store = try await Store.open(at: folder, configuration: configuration(durability))
        let start = ContinuousClock.now
        for todo in edits {
            try await store.write { tx in try tx.upsert(todo) }
        }
        let committed = ContinuousClock.now
        try await store.checkpoint()
        let checkpointed = ContinuousClock.now
        try await check(store, pending: edits.count)
        try await store.close()
        return WriteTiming(commit: committed - start, total: checkpointed - start)
    }

    /// `writers` tasks sharing one store, each running its share of the edits one transaction at
    /// a time (the store's group commit lets concurrent writers share a sync); then the checkpoint.
    static func concurrentTransactions(_ folder: URL, edits: [Todo], writers: Int) async throws -> WriteTiming {
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        let shares = (0..<writers).map { writer in stride(from: writer, to: edits.count, by: writers).map { edits[$0] } }
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for share in shares {
                group.addTask {
                    for todo in share {
                        try await store.write { tx in try tx.upsert(todo) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let committed = ContinuousClock.now
        try await store.checkpoint()
        let checkpointed = ContinuousClock.now
        try await check(store, pending: edits.count)
        try await store.close()
        return WriteTiming(commit: committed - start, total: checkpointed - start)
    }

    /// All `todos` in one durable transaction into an empty store, then the checkpoint that writes
    /// the day files. With `outbox`, each todo also queues its command (an import to send up).
    static func bulkImport(_ folder: URL, todos: [Todo], outbox: Bool) async throws -> WriteTiming {
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        let local = outbox ? [] : todos.map(LocalTodo.init)
        let start = ContinuousClock.now
        if outbox {
            try await store.write { tx in
                for todo in todos { try tx.upsert(todo) }
            }
        } else {
            try await store.write { tx in
                for todo in local { try tx.upsert(todo) }
            }
        }
        let committed = ContinuousClock.now
        try await store.checkpoint()
        let checkpointed = ContinuousClock.now
        try await check(store, pending: outbox ? todos.count : 0)
        try await store.close()
        return WriteTiming(commit: committed - start, total: checkpointed - start)
    }

    /// The mean time of a one-day fetch from an open store whose cache already holds the days
    /// (each day is fetched once before the clock starts). Returns the time and todos read.
    static func warmReads(_ folder: URL, days: [String]) async throws -> (Duration, Int) {
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        for day in Set(days) { _ = try await store.fetch(Query<Todo>(.day(day))) }
        var read = 0
        let start = ContinuousClock.now
        for day in days { read += try await store.fetch(Query<Todo>(.day(day))).count }
        let elapsed = ContinuousClock.now - start
        try await store.close()
        return (elapsed / days.count, read)
    }

    /// Open + one-day fetch, as a fresh process does it (the `cold` child, Children/ChildMain.swift).
    static func openAndRead(_ folder: URL, day: String) async throws -> ColdRead {
        let start = ContinuousClock.now
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        let opened = ContinuousClock.now
        let todos = try await store.fetch(Query<Todo>(.day(day)))
        let elapsed = ContinuousClock.now - start
        try await store.close()
        return ColdRead(total: elapsed, open: opened - start, todos: todos.count)
    }

    /// Every run ends with the outbox holding one command per transaction: proof that each
    /// transaction really queued its command.
    private static func check(_ store: Store, pending expected: Int) async throws {
        let pending = try await store.pendingCommandCount()
        guard pending == expected else {
            throw BenchError("Folio: \(pending) outbox commands queued, expected \(expected)")
        }
    }
}
