import Foundation

extension Store {
    /// ``backup(to:progress:)`` for a store opened read-only: copies the files and the journal under the
    /// readers' lock (no checkpoint runs meanwhile, so they agree), then opens the copy once,
    /// which replays the journal into the copy's files and empties its journal.
    func backupWithoutWriting(to destination: URL, progress: ProgressHandler?) async throws {
        try await lock.acquire(exclusive: false)
        do {
            try copyForBackup(to: destination, progress: copyProgress(progress, journal: true))
        } catch {
            lock.release(exclusive: false)
            throw error
        }
        lock.release(exclusive: false)
        let copy = try await Store.open(at: destination)
        try await copy.close()
    }

    private func copyForBackup(to destination: URL, progress: ProgressCounter?) throws(FolioError) {
        let target = FileSystem(root: destination.standardizedFileURL.path)
        try target.makeDirectoryDurably(StoreLayout.tempFolder)
        guard try target.list("").allSatisfy({ $0.name == StoreLayout.machinery }) else {
            throw FolioError(.io, "backup destination is not empty", path: destination.path)
        }
        var folders: Set<String> = ["", StoreLayout.machinery]
        try copyTree("", to: target, folders: &folders, progress: progress)
        if let (journal, _) = try fileSystem.read(StoreLayout.journal) {
            try AtomicFile(fileSystem: target).replace(StoreLayout.journal, with: journal)
        }
        progress?.finish()
        for folder in folders.sorted() { try target.syncDirectory(folder) }
    }
}
