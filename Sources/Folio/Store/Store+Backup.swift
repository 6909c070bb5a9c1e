public import Foundation

extension Store {
    /// Copies the store to a new folder, consistently, while other writers keep running.
    ///
    /// Takes the writers' lock (writers in every process wait for the copy), checkpoints so the
    /// files hold every committed transaction, and copies the format marker and every file
    /// outside `.folio/`, each written durably (temp, fsync, rename, directory sync). The copy is
    /// a complete store with an empty journal: it opens anywhere, and never holds half a
    /// transaction.
    ///
    /// A plain `rsync` or `cp` of a live folder is checked when it is opened: if a checkpoint ran
    /// while it was made, it could hold part of a transaction, and opening it throws
    /// ``FolioError/Code/inconsistentCopy``. Use `backup(to:)` (or `folio backup`), or
    /// ``snapshot(to:progress:)``, for a copy that always opens.
    ///
    /// A store opened read-only is not checkpointed: the copy gets its files and its journal,
    /// read under the readers' lock (so they agree), and the copy is then opened once, which
    /// applies the journal there.
    /// - Parameters:
    ///   - destination: A folder that does not exist yet, or is empty.
    ///   - progress: Called as files are copied (``FolioProgress/Phase/copying``), on the store's
    ///     executor; nil (the default) for no reports.
    /// - Throws: ``FolioError`` if the destination is not empty, a file cannot be read or written,
    ///   or a file the checkpoint must update is broken.
    public func backup(to destination: URL, progress: ProgressHandler? = nil) async throws {
        guard readOnlyReason == nil else {
            // Under the readers' lock no checkpoint runs: the files and the journal copied agree.
            try await lock.acquire(exclusive: false)
            do {
                defer { lock.release(exclusive: false) }
                try copyForBackup(to: destination, withJournal: true, progress: progress)
            }
            // Opened once, the copy replays the journal into its files and empties it.
            try await Store.open(at: destination).close()
            return
        }
        try await prepare()
        try await acquireWriterLock()
        defer { releaseWriterLock() }
        try await checkpointHoldingWriterLock()
        try copyForBackup(to: destination, withJournal: false, progress: progress)
    }

    /// Copies every file outside `.folio/` (and the journal, `withJournal`) into `destination`,
    /// which must be empty, each durably, then syncs the folders the copy made.
    func copyForBackup(to destination: URL, withJournal: Bool, progress: ProgressHandler?) throws(FolioError) {
        let target = FileSystem(root: destination.standardizedFileURL.path)
        try target.makeDirectoryDurably(StoreLayout.tempFolder)
        guard try target.list("").allSatisfy({ $0.name == StoreLayout.machinery }) else {
            throw FolioError(.io, "backup destination is not empty", path: destination.path)
        }
        let counter = try copyProgress(progress, journal: withJournal)
        var folders: Set<String> = withJournal ? ["", StoreLayout.machinery] : [""]
        try copyTree("", to: target, folders: &folders, progress: counter)
        if withJournal, let (journal, _) = try fileSystem.read(StoreLayout.journal) {
            try AtomicFile(fileSystem: target).replace(StoreLayout.journal, with: journal)
        }
        counter?.finish()
        for folder in folders.sorted() { try target.syncDirectory(folder) }
    }

    func copyTree(_ folder: String, to target: FileSystem, folders: inout Set<String>, progress: ProgressCounter?) throws(FolioError) {
        for entry in try fileSystem.list(folder).sorted(by: { $0.name < $1.name }) {
            let path = folder.isEmpty ? entry.name : folder + "/" + entry.name
            if path == StoreLayout.machinery { continue }
            if entry.isDirectory {
                try target.makeDirectoryDurably(path)
                folders.insert(path)
                try copyTree(path, to: target, folders: &folders, progress: progress)
            } else if let (bytes, _) = try fileSystem.read(path) {
                try AtomicFile(fileSystem: target).replace(path, with: bytes)
                progress?.advance()
            }
        }
    }
}
