import Foundation
import GRDB

extension GRDBContender {
    /// `transactions` between syscall markers, for the sync counter (SyncCounter.swift).
    static func markedTransactions(_ path: String, edits: [Todo], synchronous: Synchronous) throws {
        let pool = try open(path, synchronous: synchronous)
        let encoder = folioLikeEncoder()
        ChildMain.marker("begin")
        for todo in edits {
            try pool.write { db in
                try todo.upsert(db)
                try OutboxRow(upserting: todo, encoder: encoder).insert(db)
            }
        }
        ChildMain.marker("committed")
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        ChildMain.marker("end")
        try pool.close()
    }
}
