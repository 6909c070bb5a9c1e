/// Replacing partition files that people edit while Folio writes them: only if a file is still
/// the one Folio read (a compare-and-swap), merging a save found on the way (FORMAT.md, "Editing
/// by hand"). The merges and versions themselves are the version history's (``VersionHistory``).
extension StoreEngine {
    /// How often a checkpoint reads a file again and retries after finding it changed.
    static let swapAttempts = 8

    /// Brings a partition's file up to date with its committed state, replacing (or removing) it
    /// only if it still holds what Folio read; otherwise reads it again (merging the person's
    /// save) and retries, a few times. Returns nil when done, or the problem that leaves the
    /// partition's changes in the journal (the file is unreadable, or kept changing).
    /// - Parameter staged: The new version, staged and made durable by the checkpoint's barrier
    ///   (``stage(_:barrier:)``), for the first attempt; used only if the partition still holds
    ///   what was staged. Later attempts stage and sync their own.
    func writeUnlessChanged(_ partition: Partition, staged: VersionHistory.StagedPartition?, run: CheckpointRun) throws(FolioError) -> FolioError? {
        let path = partition.address.path
        let atomic = AtomicFile(fileSystem: fileSystem)
        var staged = staged
        defer { if let staged { atomic.discard(staged.file) } }
        for _ in 0..<Self.swapAttempts {
            if let problem = partition.unreadable { return problem }
            let outcome: AtomicFile.SwapOutcome
            var revision: Revision?
            // The hash of what the swap wrote, when it replaced the file.
            var written: ContentHash?
            if partition.entities.isEmpty && partition.versions.isEmpty {
                try run.noteWrite(path, nil)
                outcome = try removeUnlessChanged(partition)
            } else {
                let file: AtomicFile.Staged
                if let ready = staged, ready.contents == partition.contents {
                    file = ready.file
                    revision = ready.revision
                    staged = nil
                } else {
                    if let stale = staged { atomic.discard(stale.file) }
                    staged = nil
                    // A barrier of its own, flushed at once: the kept version and the new content
                    // are durable before the file is replaced.
                    let barrier = DurabilityBarrier(fileSystem: fileSystem, kind: .perFile)
                    let fresh = try history.stage(partition, barrier: barrier)
                    (file, revision) = (fresh.file, fresh.revision)
                    try barrier.flush()
                }
                try run.noteWrite(path, ContentHash(file.bytes))
                outcome = try atomic.swapIn(file, ifStill: partition.identity == nil ? nil : partition.fileHash)
                if case .replaced = outcome { written = ContentHash(file.bytes) }
            }
            switch outcome {
            case .replaced(let identity):
                partition.markWritten(identity: identity, revision: revision, fileHash: identity == nil ? nil : written ?? partition.fileHash)
                return nil
            case .changedOnDisk(let saves):
                report(.info, "saved by someone else while Folio was replacing it: read again and merged", path: path)
                for save in saves { absorb(save, of: path) }
                try reload(partition)
                handEdits.absorbedBecomePending(at: partition.address)
                try adoptEditsDuringCheckpoint()
            }
        }
        return FolioError(.io, "the file kept changing while Folio tried to replace it \(Self.swapAttempts) times; its changes wait in the journal", path: path)
    }

    /// A save found while Folio swapped its file: merged into Folio's newest version at once, so
    /// that a save made from Folio's content while it stood in the file for a moment, or one that
    /// replaced this save meanwhile, is merged with it too.
    private func absorb(_ bytes: [UInt8], of path: String) {
        do {
            let reconciled = history.reconcile(try PartitionFile.decode(bytes, path: path), bytes: bytes, path: path)
            history.keep(PartitionFile.encode(reconciled.contents), of: path, revision: reconciled.contents.revision)
            // Adopted before the file is written as Folio's version (writeUnlessChanged).
            if let address = partitionAddress(of: path), let folio = reconciled.folio {
                handEdits.absorb(reconciled.contents, madeOn: folio, at: address)
            }
        } catch {
            // Most often an edit in place caught half-written; the file itself is read again.
            if !bytes.isEmpty { history.keep(bytes, of: path, revision: nil, edit: true) }
            report(
                .info,
                "a save met Folio's replace but does not parse (\(error.message)); it is kept in \(KeptVersions.folder(of: path))/ (hash \(ContentHash(bytes)))",
                path: path)
        }
    }

    /// Temp files a crash left in the partition's versions folder during a compare-and-swap: Folio's
    /// own content (removed), or a person's save that was being swapped back (merged, then
    /// removed). Only with the writers' lock held: then no other process is swapping.
    func absorbSwapLeftovers(of partition: Partition) throws(FolioError) {
        let path = partition.address.path
        let folder = KeptVersions.folder(of: path)
        let entries = try fileSystem.list(folder).filter { !$0.isDirectory }
        // Staged and never swapped in: Folio's content, whose records the journal still holds.
        for entry in entries where AtomicFile.isStagedLeftover(entry.name) { try fileSystem.unlink(folder + "/" + entry.name) }
        let leftovers = entries.filter { AtomicFile.isSwapLeftover($0.name) }
        guard !leftovers.isEmpty else { return }
        let folioVersions = Set(try history.keptVersions.versions(of: path).filter { !$0.isEdit }.map(\.hash))
        var merged = false
        for leftover in leftovers {
            let relative = folder + "/" + leftover.name
            if let (bytes, _) = try fileSystem.read(relative), !bytes.isEmpty, !folioVersions.contains(ContentHash(bytes)) {
                report(.warning, "a save that a crash left in \(relative) while Folio swapped it back is merged", path: path)
                absorb(bytes, of: path)
                merged = true
            }
            try fileSystem.unlink(relative)
        }
        if merged {
            try reload(partition)
            handEdits.absorbedBecomePending(at: partition.address)
            try adoptEditsDuringCheckpoint()
        }
    }

    /// Removes an emptied partition's file if it still holds what Folio read: moves it aside into
    /// its versions folder (never into `.folio/tmp/`, which opening empties), checks it, and
    /// removes it or puts it back.
    private func removeUnlessChanged(_ partition: Partition) throws(FolioError) -> AtomicFile.SwapOutcome {
        let path = partition.address.path
        guard partition.identity != nil, try fileSystem.identity(path) != nil else {
            return try fileSystem.identity(path) == nil ? .replaced(nil) : .changedOnDisk(saves: [])
        }
        let folder = KeptVersions.folder(of: path)
        try fileSystem.makeDirectoryDurably(folder)
        let aside = folder + "/removing"
        try fileSystem.rename(path, to: aside)
        let moved = try fileSystem.read(aside)
        if let moved, ContentHash(moved.bytes) == partition.fileHash {
            try fileSystem.unlink(aside)
            return .replaced(nil)
        }
        if try fileSystem.renameNoReplace(aside, to: path) == false {
            // A newer save took the place meanwhile: the one moved aside was superseded by it.
            try fileSystem.unlink(aside)
        } else if try fileSystem.identity(aside) != nil {
            try fileSystem.rename(aside, to: path)   // cannot rename exclusively here
        }
        return .changedOnDisk(saves: moved.map { [$0.bytes] } ?? [])
    }
}
