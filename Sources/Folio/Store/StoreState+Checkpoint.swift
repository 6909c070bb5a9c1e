/// Checkpointing: bringing the partition files up to date with the journal, then emptying it.
extension StoreState {
    struct CheckpointOutcome {
        /// Files written or removed.
        var filesWritten = 0
        /// Partitions whose file could not be read (hand-broken); their changes stay in the journal.
        var blocked: [FolioError] = []
    }

    /// Writes every partition touched by the journal's records, then resets the journal.
    ///
    /// Must run with the writers' lock held. The steps, and what a crash after each leaves:
    /// 1. Sync the journal: every record about to be applied is durable (in relaxed durability
    ///    this is where they become so). A crash before this loses only unsynced records, whole.
    /// 2. Replace each touched partition file atomically (temp, fsync, rename) and sync its
    ///    directory. A crash here leaves some files new and some old, and the journal intact:
    ///    recovery replays every record onto the files, which is idempotent, so the result is the
    ///    same either way.
    /// 3. Reset the journal (new header, truncate, sync). A crash here is harmless: the records
    ///    are already in the files (see ``Journal/reset(to:)``).
    ///
    /// A partition whose file cannot be read is never written; its records stay in the journal
    /// (and the journal is not reset) until the file is fixed.
    @discardableResult
    func checkpoint() throws(FolioError) -> CheckpointOutcome {
        try refreshJournal()
        var outcome = CheckpointOutcome()
        guard header != nil else { return outcome }
        // A person's saves read so far become commands before their file becomes Folio's version.
        try adoptEditsDuringCheckpoint()
        guard let header else { return outcome }
        let tail = try journal.size - readOffset
        let merged = partitions.partitions.filter(\.holdsMerge).map(\.address)
        guard !records.isEmpty || tail > 0 || outbox?.needsQuarantineMove == true || !merged.isEmpty else {
            saveIndexes()
            return outcome
        }
        try journal.sync()

        var directories = Set<String>()
        // Every version written is noted in `.folio/written` first (the copy check).
        try beginWrittenLog()
        defer { writtenAppender = nil }
        for address in touched.union(merged).sorted() {
            let partition: Partition
            do {
                partition = try self.partition(address)
            } catch where error.code == .corruptFile {
                outcome.blocked.append(error)
                continue
            }
            if let problem = partition.unreadable {
                outcome.blocked.append(problem)
                continue
            }
            // An edit of a collection the app has not registered yet (at open) stays pending in
            // memory and is adopted once the app uses the collection.
            try adoptEditsDuringCheckpoint()
            try absorbSwapLeftovers(of: partition)
            let path = address.path
            let folder = FileSystem.parent(of: path)
            // A partition with no entities keeps its file while it holds tombstone versions.
            let isEmpty = partition.entities.isEmpty && partition.versions.isEmpty
            if isEmpty && partition.identity == nil {
                partition.markWritten(identity: nil)
                try noteWrite(path, nil)
            } else if isEmpty || partition.isDirty || partition.identity == nil {
                // Only if the file is still the one read: an editor's save is never overwritten.
                if !isEmpty { try fileSystem.makeDirectoryDurably(folder) }
                if let problem = try writeUnlessChanged(partition) {
                    outcome.blocked.append(problem)
                    continue
                }
                outcome.filesWritten += 1
                directories.insert(folder)
            } else {
                // Unchanged, but an earlier checkpoint may have renamed it into place and failed
                // before syncing the folder: sync it again, cheaply, before the journal forgets.
                if partition.adoptedSave { try keepAdoptedSave(partition) }
                directories.insert(folder)
                try noteWrite(path, partition.fileHash)
            }
        }
        outcome.filesWritten += try writeOutboxFiles(folders: &directories)
        for folder in directories.sorted() { try fileSystem.syncDirectory(folder) }
        // Before the journal forgets: a copy of the folder can then match its files to its journal.
        try finishWrittenLog(checkpoint: outcome.blocked.isEmpty)

        for problem in outcome.blocked {
            report(.error, "changes to this file wait in the journal until it is fixed: \(problem.message)", path: problem.path)
        }
        guard outcome.blocked.isEmpty else { return outcome }
        let fresh = Journal.Header(generation: header.generation &+ 1, firstTransaction: nextTransaction,
                                   nextSequence: try nextSequence())
        try journal.reset(to: fresh)
        touched = []
        outbox?.touched = []
        records = []
        self.header = fresh
        readOffset = Int64(Journal.headerSize)
        saveIndexes()
        return outcome
    }

    /// Removes temp files left by a crash. Only with the writers' lock held (no other process is
    /// writing one then).
    func removeLeftoverTempFiles() throws(FolioError) {
        for entry in try fileSystem.list(StoreLayout.tempFolder) where !entry.isDirectory {
            try fileSystem.unlink(StoreLayout.tempFolder + "/" + entry.name)
            report(.info, "removed leftover temp file \(entry.name)", path: StoreLayout.tempFolder)
        }
    }
}
