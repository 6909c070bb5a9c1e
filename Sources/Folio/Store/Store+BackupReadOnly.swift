import Foundation

extension Store {
    /// ``backup(to:progress:)`` for a store opened read-only: copies the files and the journal under the
    /// readers' lock (no checkpoint runs meanwhile, so they agree), then opens the copy once,
    /// which replays the journal into the copy's files and empties its journal.
    func backupWithoutWriting(to destination: URL, progress: ProgressHandler?) async throws {
        try await lock.acquire(exclusive: false)
        do {
            defer { lock.release(exclusive: false) }
            try copyForBackup(to: destination, withJournal: true, progress: progress)
        }
        let copy = try await Store.open(at: destination)
        try await copy.close()
    }
}
