import Foundation
import GRDB

/// SQLite's side of each comparison, through GRDB: a `DatabasePool` (WAL mode) with
/// `synchronous` FULL or NORMAL. Every function opens the database file it is given and
/// releases it before returning.
enum GRDBContender {
    enum Synchronous: String, Sendable {
        case full = "FULL"
        case normal = "NORMAL"
    }

    /// Opens a pool whose writer connection runs with `synchronous`, checked by reading the
    /// pragma back. (GRDB's pool sets NORMAL on its writer after `prepareDatabase` runs, so the
    /// setting is made after opening.) With `createSchema`, creates the tables if needed (a
    /// write transaction: never on the read paths).
    static func open(_ path: String, synchronous: Synchronous, createSchema: Bool = true) throws -> DatabasePool {
        let pool = try DatabasePool(path: path)
        let level = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous.rawValue)")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        guard level == (synchronous == .full ? 2 : 1) else {
            throw BenchError("GRDB: PRAGMA synchronous reads \(level.map(String.init) ?? "nothing"), expected \(synchronous.rawValue)")
        }
        if createSchema { try pool.write { db in try db.execute(sql: GRDBSchema.statements) } }
        return pool
    }

    /// Fills the database with `todos` as data already synced (no outbox rows), checkpointed
    /// (the WAL emptied into the database file). Not timed.
    static func seed(_ path: String, todos: [Todo]) throws {
        try seed(path, records: todos, schema: GRDBSchema.statements)
    }

    /// Creates `schema` and fills it with `records`, as ``seed(_:todos:)`` does.
    static func seed(_ path: String, records: [some PersistableRecord], schema: String) throws {
        let pool = try open(path, synchronous: .normal, createSchema: false)
        try pool.write { db in
            try db.execute(sql: schema)
            for record in records { try record.insert(db) }
        }
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try pool.close()
    }

    /// One transaction per edit (upsert the todo row + insert its outbox row), one after the
    /// other; then a checkpoint that empties the WAL into the database file.
    static func transactions(_ path: String, edits: [Todo], synchronous: Synchronous) throws -> WriteTiming {
        let pool = try open(path, synchronous: synchronous)
        let encoder = folioLikeEncoder()
        let start = ContinuousClock.now
        for todo in edits {
            try pool.write { db in
                try todo.upsert(db)
                try OutboxRow(upserting: todo, encoder: encoder).insert(db)
            }
        }
        let committed = ContinuousClock.now
        try checkpoint(pool)
        let checkpointed = ContinuousClock.now
        try check(pool, outbox: edits.count)
        try pool.close()
        return WriteTiming(commit: committed - start, total: checkpointed - start)
    }

    /// `writers` tasks writing through one `DatabasePool` (SQLite serializes them; each commit
    /// syncs the WAL), then the checkpoint.
    static func concurrentTransactions(_ path: String, edits: [Todo], writers: Int) async throws -> WriteTiming {
        let pool = try open(path, synchronous: .full)
        let shares = (0..<writers).map { writer in stride(from: writer, to: edits.count, by: writers).map { edits[$0] } }
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for share in shares {
                group.addTask {
                    let encoder = folioLikeEncoder()
                    for todo in share {
                        try await pool.write { db in
                            try todo.upsert(db)
                            try OutboxRow(upserting: todo, encoder: encoder).insert(db)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let committed = ContinuousClock.now
        try checkpoint(pool)
        let checkpointed = ContinuousClock.now
        try check(pool, outbox: edits.count)
        try pool.close()
        return WriteTiming(commit: committed - start, total: checkpointed - start)
    }

    /// All `todos` in one transaction (synchronous FULL) into an empty database, then the
    /// checkpoint. With `outbox`, each todo also gets its outbox row.
    static func bulkImport(_ path: String, todos: [Todo], outbox: Bool) throws -> WriteTiming {
        let pool = try open(path, synchronous: .full)
        let encoder = folioLikeEncoder()
        let start = ContinuousClock.now
        try pool.write { db in
            for todo in todos {
                try todo.insert(db)
                if outbox { try OutboxRow(upserting: todo, encoder: encoder).insert(db) }
            }
        }
        let committed = ContinuousClock.now
        try checkpoint(pool)
        let checkpointed = ContinuousClock.now
        try check(pool, outbox: outbox ? todos.count : 0)
        try pool.close()
        return WriteTiming(commit: committed - start, total: checkpointed - start)
    }

    /// The mean time of a one-day fetch (`WHERE date = ?` on the index, decoded into todos) from
    /// an open pool, each day fetched once before the clock starts (SQLite's page cache warm).
    static func warmReads(_ path: String, days: [String]) throws -> (Duration, Int) {
        let pool = try open(path, synchronous: .full, createSchema: false)
        for day in Set(days) { _ = try fetchDay(pool, day) }
        var read = 0
        let start = ContinuousClock.now
        for day in days { read += try fetchDay(pool, day).count }
        let elapsed = ContinuousClock.now - start
        try pool.close()
        return (elapsed / days.count, read)
    }

    /// Open + one-day fetch, as a fresh process does it (the `cold` child, Children/ChildMain.swift).
    static func openAndRead(_ path: String, day: String) throws -> ColdRead {
        let start = ContinuousClock.now
        let pool = try open(path, synchronous: .full, createSchema: false)
        let opened = ContinuousClock.now
        let todos = try fetchDay(pool, day)
        let elapsed = ContinuousClock.now - start
        try pool.close()
        return ColdRead(total: elapsed, open: opened - start, todos: todos.count)
    }

    static func fetchDay(_ pool: DatabasePool, _ day: String) throws -> [Todo] {
        try pool.read { db in try Todo.filter(Column("date") == day).fetchAll(db) }
    }

    private static func checkpoint(_ pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    private static func check(_ pool: DatabasePool, outbox expected: Int) throws {
        let rows = try pool.read { db in try OutboxRow.fetchCount(db) }
        guard rows == expected else { throw BenchError("GRDB: \(rows) outbox rows, expected \(expected)") }
    }

    /// The encoder Folio uses for entity bodies: sorted keys, unescaped slashes.
    static func folioLikeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}
