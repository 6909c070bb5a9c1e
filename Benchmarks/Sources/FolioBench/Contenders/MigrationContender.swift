import Folio
import Foundation
import GRDB

/// Migrating the 10-year store to a new model of the todo: `title` renamed to `text`, and a
/// `weather` field added with a default. Folio rewrites every day file (crash-safe: staged, one
/// commit record, renamed into place); SQLite changes its schema, which for these two changes
/// leaves the rows as they are (`ALTER TABLE … RENAME COLUMN`, `ADD COLUMN … DEFAULT`), through
/// GRDB's `DatabaseMigrator`. The row informs: the work differs by nature.
enum MigrationContender {
    static let name = "bench-text-weather"

    static func folio(_ folder: URL) async throws -> Duration {
        var migrator = Migrator()
        migrator.registerMigration(
            name,
            [
                .renameField("title", to: "text", in: "todos"),
                .setDefault("weather", .string("unknown"), in: "todos"),
            ])
        let start = ContinuousClock.now
        let report = try await migrator.migrate(at: folder)
        let elapsed = ContinuousClock.now - start
        guard report.pending == [name], let todos = report.collections.first(where: { $0.name == "todos" }), todos.entitiesChanged > 0 else {
            throw BenchError("Folio's migration of the 10-year store changed nothing: \(report)")
        }
        return elapsed
    }

    static func grdb(_ path: String) throws -> Duration {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(name) { db in
            try db.execute(sql: "ALTER TABLE todo RENAME COLUMN title TO text")
            try db.execute(sql: "ALTER TABLE todo ADD COLUMN weather TEXT NOT NULL DEFAULT 'unknown'")
        }
        let pool = try GRDBContender.open(path, synchronous: .full, createSchema: false)
        let start = ContinuousClock.now
        try migrator.migrate(pool)
        let elapsed = ContinuousClock.now - start
        try pool.close()
        return elapsed
    }
}
