import Folio
import Foundation

extension FolioContender {
    /// `transactions` between syscall markers, for the sync counter (SyncCounter.swift).
    static func markedTransactions(_ folder: URL, edits: [Todo], durability: Durability) async throws {
        let store = try await Store.open(at: folder, configuration: configuration(durability))
        ChildMain.marker("begin")
        for todo in edits {
            try await store.write { tx in try tx.upsert(todo) }
        }
        ChildMain.marker("committed")
        try await store.checkpoint()
        ChildMain.marker("end")
        try await store.close()
    }
}
