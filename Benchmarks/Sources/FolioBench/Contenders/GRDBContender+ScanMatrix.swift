import Foundation
import GRDB

/// SQLite's side of the scan matrix: open the shape's database (not timed), then `SELECT * …
/// WHERE` the selectivity's clause, the rows decoded as the shape's todos, timed as `runs` says.
extension GRDBContender {
    static func matrixScan(_ path: String, shape: ScanShape, selectivity: ScanSelectivity, runs: ScanRuns) async throws -> ScanRuns.Timing {
        let pool = try open(path, synchronous: .full, createSchema: false)
        let clause = shape.sql(selectivity)
        // Synchronous, as the other rows read (not GRDB's async variant).
        func query() throws -> Int {
            try pool.read { db in
                switch shape {
                case .narrow: return try NarrowTodo.filter(sql: clause).fetchAll(db).count
                case .wide: return try WideTodo.filter(sql: clause).fetchAll(db).count
                }
            }
        }
        let timing = try await runs.measure { try query() }
        try pool.close()
        return timing
    }

    /// Gathers the statistics SQLite's planner chooses indexes with (after seeding, not timed).
    static func analyze(_ path: String) throws {
        let pool = try open(path, synchronous: .normal, createSchema: false)
        try pool.writeWithoutTransaction { db in try db.execute(sql: "ANALYZE") }
        try pool.close()
    }

    /// How SQLite runs each clause (`EXPLAIN QUERY PLAN`), for the report.
    static func plans(_ path: String, shape: ScanShape) throws -> [ScanSelectivity: String] {
        let pool = try open(path, synchronous: .normal, createSchema: false)
        var plans: [ScanSelectivity: String] = [:]
        try pool.read { db in
            for selectivity in ScanSelectivity.allCases {
                let table = shape == .narrow ? NarrowTodo.databaseTableName : WideTodo.databaseTableName
                let rows = try GRDB.Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT * FROM \(table) WHERE \(shape.sql(selectivity))")
                plans[selectivity] = rows.compactMap { $0["detail"] as String? }.joined(separator: "; ")
            }
        }
        try pool.close()
        return plans
    }
}
