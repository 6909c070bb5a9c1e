import Foundation
import GRDB

extension GRDBContender {
    /// `transactions` between syscall markers, for the sync counter (SyncCounter.swift). Returns
    /// their cost per transaction (ResourceUsage.line).
    static func markedTransactions(_ path: String, edits: [Todo], synchronous: Synchronous) throws -> String {
        let pool = try open(path, synchronous: synchronous)
        let encoder = folioLikeEncoder()
        ChildMain.marker("begin")
        let start = ResourceUsage.now()
        for todo in edits {
            try pool.write { db in
                try todo.upsert(db)
                try OutboxRow(upserting: todo, encoder: encoder).insert(db)
            }
        }
        let committed = ResourceUsage.now()
        ChildMain.marker("committed")
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        ChildMain.marker("end")
        try pool.close()
        return committed.line(since: start, transactions: edits.count)
    }
}
