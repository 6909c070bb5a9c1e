/// Checkpointing: bringing the partition files up to date with the journal, then emptying it.
extension StoreEngine {
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
    ///    Then stage: write each touched partition's new version to a temp file beside it and
    ///    keep it as Folio's newest version, nothing in place yet.
    /// 2. One barrier (``DurabilityBarrier``: `syncfs` on Linux) makes the staged files and the
    ///    kept versions durable: every byte about to be put in place. A crash before it leaves
    ///    temp files, which the next checkpoint of their file removes.
    /// 3. Swap each staged file in by compare-and-swap; write the outbox's new files in place
    ///    (their bytes are in the journal's records until the reset); a second barrier makes the
    ///    names durable. A crash here leaves some files new and some old (never torn: their
    ///    bytes were durable before their names), possibly a command file cut short, and the
    ///    journal intact: recovery replays every record onto the files, which is idempotent, and
    ///    writes the command files again, so the result is the same either way.
    /// 4. Reset the journal (new header, truncate, sync). A crash here is harmless: the records
    ///    are already in the files (see ``Journal/reset(to:)``).
    ///
    /// So a checkpoint costs four syncs where `syncfs` exists, however many files it writes.
    /// A partition whose file cannot be read is never written; its records stay in the journal
    /// (and the journal is not reset) until the file is fixed.
    @discardableResult
    func checkpoint() throws(FolioError) -> CheckpointOutcome {
        try refreshJournal()
        var outcome = CheckpointOutcome()
        guard cursor.header != nil else { return outcome }
        // A person's saves read so far become commands before their file becomes Folio's version.
        try adoptEditsDuringCheckpoint()
        guard let header = cursor.header else { return outcome }
        let tail = try cursor.bytesPastCursor()
        let merged = partitions.partitions.filter(\.holdsMerge).map(\.address)
        guard !cursor.records.isEmpty || tail > 0 || outbox.needsQuarantineMove || !merged.isEmpty else {
            locator.saveIndexes(granularities: collections)
            saveFieldIndexes()
            return outcome
        }
        // The journal first: no file, not even a kept version, may show a record that a power
        // cut could still take away.
        try journal.sync()
        let barrier = DurabilityBarrier(fileSystem: fileSystem)

        var directories = Set<String>()
        var staged: [(Partition, VersionHistory.StagedPartition)] = []
        var removed: [Partition] = []
        // Every version written is noted in `.folio/written` first (the copy check).
        let run = try beginCheckpointRun()
        for address in touched.union(merged).sortedByPath() {
            let partition: Partition
            do {
                partition = try self.partition(address)
            } catch let error where error.code == .corruptFile {
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
                partition.markWritten(identity: nil, revision: partition.revision, fileHash: partition.fileHash)
                try run.noteWrite(path, nil)
            } else if isEmpty {
                // Folio's newest version of the file is then "no entities": a save from an older
                // buffer of it is merged against the removal and brings back nothing deleted.
                history.keep(partition.unkeptFile, of: path, revision: partition.revision, edit: true)
                try history.keepRemoval(of: partition, barrier: barrier)
                removed.append(partition)
            } else if partition.isDirty || partition.identity == nil {
                try barrier.makeDirectory(folder)
                staged.append((partition, try history.stage(partition, barrier: barrier)))
            } else {
                // Unchanged, but an earlier checkpoint may have renamed it into place and failed
                // before syncing the folder: sync it again, cheaply, before the journal forgets.
                if partition.adoptedSave { try keepAdoptedSave(partition, barrier: barrier, run: run) }
                directories.insert(folder)
                try run.noteWrite(path, partition.fileHash)
            }
        }
        let writes: [(Partition, VersionHistory.StagedPartition?)] = staged.map { ($0, $1) } + removed.map { ($0, nil) }
        // The first barrier: every byte about to be put in place, and the versions kept of it.
        if !writes.isEmpty { try barrier.flush() }
        // Only if each file is still the one read: an editor's save is never overwritten.
        for (partition, file) in writes {
            if let problem = try writeUnlessChanged(partition, staged: file, run: run) {
                outcome.blocked.append(problem)
                continue
            }
            outcome.filesWritten += 1
            directories.insert(FileSystem.parent(of: partition.address.path))
        }
        outcome.filesWritten += try outbox.writeFiles(folders: &directories, barrier: barrier, noteWrite: run.noteWrite)
        // A record appended meanwhile (an edit adopted while a file was swapped) may touch a
        // partition already written: the journal then keeps everything for the next checkpoint.
        let late = touched.first { partitions[$0]?.isDirty ?? true }
        let emptiesJournal = outcome.blocked.isEmpty && late == nil
        // Before the journal forgets: a copy of the folder can then match its files to its
        // journal. The second barrier makes the log's lines durable with everything else.
        try finish(run, emptiesJournal: emptiesJournal, sync: !barrier.coversEverything)
        // The second barrier: every name put in place, and the outbox's new files.
        for folder in directories { barrier.noteFolder(folder) }
        try barrier.flush()

        for problem in outcome.blocked {
            report(.error, "changes to this file wait in the journal until it is fixed: \(problem.message)", path: problem.path)
        }
        guard outcome.blocked.isEmpty else { return outcome }
        if let late {
            report(.info, "changed again while the checkpoint wrote it; the journal keeps the change for the next checkpoint", path: late.path)
            return outcome
        }
        let fresh = cursor.nextGeneration(header.generation &+ 1, nextSequence: try nextSequence())
        try journal.reset(to: fresh)
        outbox.checkpointed()
        cursor.start(fresh)
        outbox.saveEntityIndex(from: header.generation, to: fresh.generation)
        locator.saveIndexes(granularities: collections)
        saveFieldIndexes()
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
