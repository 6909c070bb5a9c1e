import Foundation

extension Store {
    /// ``backup(to:)`` for a store opened read-only: copies the files and the journal under the
    /// readers' lock (no checkpoint runs meanwhile, so they agree), then opens the copy once,
    /// which replays the journal into the copy's files and empties its journal.
    func backupWithoutWriting(to destination: URL) async throws {
        try await lock.acquire(exclusive: false)
        do {
            try copyForBackup(to: destination)
        } catch {
            lock.release(exclusive: false)
            throw error
        }
        lock.release(exclusive: false)
        let copy = try await Store.open(at: destination)
        try await copy.close()
    }

    private func copyForBackup(to destination: URL) throws(FolioError) {
        let target = FileSystem(root: destination.standardizedFileURL.path)
        try target.makeDirectoryDurably(StoreLayout.tempFolder)
        guard try target.list("").allSatisfy({ $0.name == StoreLayout.machinery }) else {
            throw FolioError(.io, "backup destination is not empty", path: destination.path)
        }
        var folders: Set<String> = ["", StoreLayout.machinery]
        try copyTree("", to: target, folders: &folders)
        if let (journal, _) = try fileSystem.read(StoreLayout.journal) {
            try AtomicFile(fileSystem: target).replace(StoreLayout.journal, with: journal)
        }
        for folder in folders.sorted() { try target.syncDirectory(folder) }
    }
}
