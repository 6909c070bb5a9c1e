import Foundation
import GRDB

/// SQLite's side of the outbox group, through GRDB: the same todos and drafts, and an `outbox`
/// table with a row per pending command and an index on (collection, entityID). A commit upserts
/// the row and inserts its outbox row in one transaction (synchronous FULL); a coalescing one also
/// deletes the entity's pending row; the sync status counts the entity's pending rows.
extension GRDBContender {
    /// Creates the tables (GRDBSchema.outboxAxis) and fills them: every todo and draft, and an
    /// outbox row per pending one. Not timed.
    static func seedOutbox(_ path: String, data: OutboxData, pendingTodos: [Todo], pendingDrafts: [Draft]) throws {
        let pool = try open(path, synchronous: .normal, createSchema: false)
        let encoder = folioLikeEncoder()
        try pool.write { db in
            try db.execute(sql: GRDBSchema.outboxAxis)
            for todo in data.todos.todos { try todo.insert(db) }
            for draft in data.drafts { try draft.insert(db) }
            for todo in pendingTodos { try OutboxRow(upserting: todo, encoder: encoder).insert(db) }
            for draft in pendingDrafts { try OutboxRow(upserting: draft, encoder: encoder).insert(db) }
        }
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try checkPending(pool, pendingTodos.count + pendingDrafts.count)
        try pool.close()
    }

    /// The mean time of `count` sync statuses of the todo `id` (its pending rows counted) in an
    /// open pool that answered once before (not timed). Each must find one row.
    static func syncStatuses(_ path: String, id: String, count: Int) throws -> Duration {
        let pool = try open(path, synchronous: .full, createSchema: false)
        try checkStatus(try pool.read { db in try pendingRows(db, Todo.collection, id) }, id: id)
        var last = 0
        let start = ContinuousClock.now
        for _ in 0..<count { last = try pool.read { db in try pendingRows(db, Todo.collection, id) } }
        let elapsed = ContinuousClock.now - start
        try checkStatus(last, id: id)
        try pool.close()
        return elapsed / count
    }

    /// The first sync status of the todo `id` in a fresh process: open (not timed), then the count.
    static func firstSyncStatus(_ path: String, id: String) throws -> Duration {
        let pool = try open(path, synchronous: .full, createSchema: false)
        let start = ContinuousClock.now
        let rows = try pool.read { db in try pendingRows(db, Todo.collection, id) }
        let elapsed = ContinuousClock.now - start
        try checkStatus(rows, id: id)
        try pool.close()
        return elapsed
    }

    /// One transaction per edit (synchronous FULL), the first `untimed` not timed; then the outbox
    /// must hold `pendingAfter` rows. Returns the mean time of the timed commits.
    static func outboxCommits(_ path: String, _ edits: [OutboxEdit], untimed: Int, pendingAfter: Int) throws -> Duration {
        guard untimed >= 1, edits.count > untimed else { throw BenchError("GRDB: no commit left to time after \(untimed) untimed") }
        let pool = try open(path, synchronous: .full, createSchema: false)
        let encoder = folioLikeEncoder()
        for edit in edits.prefix(untimed) { try pool.write { db in try commit(edit, db, encoder) } }
        let start = ContinuousClock.now
        for edit in edits.dropFirst(untimed) { try pool.write { db in try commit(edit, db, encoder) } }
        let elapsed = ContinuousClock.now - start
        try checkPending(pool, pendingAfter)
        try pool.close()
        return elapsed / (edits.count - untimed)
    }

    /// Open + one transaction (synchronous FULL), as a fresh process does it; then the outbox must
    /// hold `pendingAfter` rows.
    static func openAndCommit(_ path: String, _ edit: OutboxEdit, pendingAfter: Int) throws -> Duration {
        let start = ContinuousClock.now
        let pool = try open(path, synchronous: .full, createSchema: false)
        let encoder = folioLikeEncoder()
        try pool.write { db in try commit(edit, db, encoder) }
        let elapsed = ContinuousClock.now - start
        try checkPending(pool, pendingAfter)
        try pool.close()
        return elapsed
    }

    /// A todo: upsert + its outbox row. A draft: upsert, its pending rows deleted, its new row.
    private static func commit(_ edit: OutboxEdit, _ db: Database, _ encoder: JSONEncoder) throws {
        switch edit {
        case .todo(let todo):
            try todo.upsert(db)
            try OutboxRow(upserting: todo, encoder: encoder).insert(db)
        case .draft(let draft):
            try draft.upsert(db)
            try db.execute(sql: "DELETE FROM outbox WHERE collection = ? AND entityID = ?", arguments: [Draft.collection, draft.id])
            try OutboxRow(upserting: draft, encoder: encoder).insert(db)
        }
    }

    private static func pendingRows(_ db: Database, _ collection: String, _ id: String) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE collection = ? AND entityID = ?", arguments: [collection, id]) ?? 0
    }

    private static func checkStatus(_ rows: Int, id: String) throws {
        guard rows == 1 else { throw BenchError("GRDB: todo \(id) has \(rows) pending outbox rows, expected 1") }
    }

    private static func checkPending(_ pool: DatabasePool, _ expected: Int) throws {
        let rows = try pool.read { db in try OutboxRow.fetchCount(db) }
        guard rows == expected else { throw BenchError("GRDB: \(rows) outbox rows, expected \(expected)") }
    }
}
