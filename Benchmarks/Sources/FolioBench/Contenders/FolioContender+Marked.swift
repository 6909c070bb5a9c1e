import Folio
import Foundation

extension FolioContender {
    /// `transactions` between syscall markers, for the sync counter (SyncCounter.swift). Returns
    /// their cost per transaction (ResourceUsage.line).
    static func markedTransactions(_ folder: URL, edits: [Todo], durability: Durability) async throws -> String {
        let store = try await Store.open(at: folder, configuration: configuration(durability))
        ChildMain.marker("begin")
        let start = ResourceUsage.now()
        for todo in edits {
            try await store.write { tx in try tx.upsert(todo) }
        }
        let committed = ResourceUsage.now()
        ChildMain.marker("committed")
        try await store.checkpoint()
        ChildMain.marker("end")
        try await store.close()
        return committed.line(since: start, transactions: edits.count)
    }
}
