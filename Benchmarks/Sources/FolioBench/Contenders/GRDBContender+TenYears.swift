import Foundation
import GRDB

/// SQLite's side of row 10, through GRDB, each run in a fresh child process on the shared
/// ten-year database (the `todo` table with its `date` index; the primary key is the id).
extension GRDBContender {
    /// The first query of a fresh process over the whole table: open (not timed), then
    /// `WHERE title LIKE '%word%' AND done = 0`, the rows decoded as `Todo`. (LIKE ignores ASCII
    /// case where Folio's `contains` does not; the workload's words make both find the same rows,
    /// which the runner checks.)
    static func scan(_ path: String, word: String) throws -> (Duration, Int) {
        let pool = try open(path, synchronous: .full, createSchema: false)
        let start = ContinuousClock.now
        let matches = try pool.read { db in
            try Todo.filter(Column("title").like("%\(word)%") && Column("done") == false).fetchAll(db)
        }
        let elapsed = ContinuousClock.now - start
        try pool.close()
        return (elapsed, matches.count)
    }

    /// One `WHERE date = ?` query per day on the index, oldest first, in a fresh process: open
    /// (not timed), then every day.
    static func readEveryDay(_ path: String, days: [String]) throws -> (Duration, Int) {
        let pool = try open(path, synchronous: .full, createSchema: false)
        var read = 0
        let start = ContinuousClock.now
        for day in days { read += try fetchDay(pool, day).count }
        let elapsed = ContinuousClock.now - start
        try pool.close()
        return (elapsed, read)
    }

    /// Open + one todo by primary key, as a fresh process does it.
    static func openAndGet(_ path: String, id: String) throws -> (Duration, Todo?) {
        let start = ContinuousClock.now
        let pool = try open(path, synchronous: .full, createSchema: false)
        let todo = try pool.read { db in try Todo.fetchOne(db, key: id) }
        let elapsed = ContinuousClock.now - start
        try pool.close()
        return (elapsed, todo)
    }

    /// What a widget does: open the database and read today's todos; `measure` runs before closing.
    static func widget(_ path: String, today: String, measure: () -> Int) throws -> (Int, Int) {
        let pool = try open(path, synchronous: .full, createSchema: false)
        let todos = try fetchDay(pool, today)
        let peak = measure()
        try pool.close()
        return (todos.count, peak)
    }
}
