/// Partition files that people edit while Folio writes them: reading a save made from an older
/// version (merged three ways against the versions Folio keeps), and replacing a file only if it
/// is still the one Folio read (FORMAT.md, "Editing by hand").
extension StoreState {
    /// How often a checkpoint reads a file again and retries after finding it changed.
    static let swapAttempts = 8

    var keptVersions: KeptVersions { KeptVersions(fileSystem: fileSystem) }

    /// What a partition file read from disk holds for Folio: the file itself, or, when it was saved
    /// from a version older than the newest Folio wrote, its merge with what Folio wrote since.
    ///
    /// The version the person started from is the kept version nearest to the saved file (fewest
    /// entities differing; the newest among equals). Without kept versions the file is taken as
    /// it is. Never throws: versions that cannot be read are skipped (and reported).
    func reconcile(_ contents: PartitionFile.Contents, bytes: [UInt8], path: String) -> Reconciled {
        let hash = ContentHash(bytes)
        var reconciled = reconcile(contents, bytes: bytes, hash: hash, path: path)
        reconciled.hash = hash
        return reconciled
    }

    private func reconcile(_ contents: PartitionFile.Contents, bytes: [UInt8], hash: ContentHash, path: String) -> Reconciled {
        // What a checkpoint last wrote to the file: Folio's, without listing its kept versions.
        if writtenHashes.current(fileSystem, worthReading: fileLoads > WrittenHashesCache.worthReadingAfter)?.isLastWritten(hash, at: path) == true {
            return Reconciled(contents: contents, merged: false, kept: true)
        }
        var candidates: [(name: String, contents: PartitionFile.Contents)] = []   // newest first
        var isKept = false
        var written: PartitionFile.Contents?
        do {
            let versions = try keptVersions.versions(of: path)
            // Ours: the newest version Folio wrote. The base: any version, Folio's or a person's.
            guard let newest = versions.last(where: { !$0.isEdit }) else { return Reconciled(contents: contents, merged: false, kept: false) }
            if newest.hash == hash { return Reconciled(contents: contents, merged: false, kept: true) }
            isKept = versions.contains { $0.hash == hash }
            // Without Folio's newest version there is nothing to merge against.
            guard let ours = try keptContents(newest, path: path) else { return Reconciled(contents: contents, merged: false, kept: isKept) }
            candidates.append((newest.name, ours))
            // A save kept when first read but never merged since (the process that read it died
            // first) is not its own base: it is merged against Folio's versions like the first time.
            let ownEdit = versions.last { $0.isEdit && $0.hash == hash }
            let mergedSince = ownEdit.map { edit in versions.contains { !$0.isEdit && $0.order > edit.order } } ?? true
            for version in versions.reversed() where version.name != newest.name && (mergedSince || version.hash != hash) {
                if let kept = try keptContents(version, path: path) { candidates.append((version.name, kept)) }
            }
            // What Folio last wrote to the file, the edit's baseline. A save read again (by a
            // process that died before adopting it) is its own nearest version, and Folio's
            // versions kept after it are the merges made from reading it, not writes: the
            // baseline is Folio's version from before it.
            // A file that is an older version Folio wrote (a crash between keeping a version and
            // replacing the file) is not an edit.
            let isFolios = versions.contains { !$0.isEdit && $0.hash == hash }
            written = isFolios ? nil : ours
            if !isFolios, let edit = versions.last(where: { $0.isEdit && $0.hash == hash }),
               let before = versions.last(where: { !$0.isEdit && $0.order < edit.order }), before.name != newest.name {
                written = try keptContents(before, path: path)
            }
        } catch {
            report(.warning, "cannot read the kept versions of this file (\(error.message)); taking it as it is", path: path)
            return Reconciled(contents: contents, merged: false, kept: false)
        }
        guard let ours = candidates.first else { return Reconciled(contents: contents, merged: false, kept: false) }
        // Among versions equally near, the oldest: taking a newer one would read the entities
        // Folio added after it as deleted by the person.
        var base = ours
        var nearest = PartitionMerge.distance(ours.contents.entities, contents.entities)
        for candidate in candidates.dropFirst() where nearest > 0 {
            let distance = PartitionMerge.distance(candidate.contents.entities, contents.entities)
            if distance <= nearest { (base, nearest) = (candidate, distance) }
        }
        // The save and what Folio now takes the file to hold are kept at once: a later save made
        // from either (an editor reloads, a script reads during a checkpoint) finds its base, and
        // Folio's newest version stays the state Folio serves.
        if !isKept { keep(bytes, of: path, edit: true) }
        guard base.name != ours.name else { return Reconciled(contents: contents, merged: false, kept: true, folio: written) }
        let result = PartitionMerge.merge(base: base.contents, ours: ours.contents, theirs: contents)
        keep(PartitionFile.encode(result.contents), of: path)
        var text = "saved from an older version than Folio's (\(KeptVersions.folder(of: path))/\(base.name)): merged"
        if !result.keptFromFolio.isEmpty {
            text += "; kept Folio's newer state of \(result.keptFromFolio.count) entities (\(result.keptFromFolio.prefix(5).joined(separator: ", ")))"
        }
        if !result.conflicts.isEmpty {
            text += "; changed on both sides, merged field by field with your values first: \(result.conflicts.prefix(5).joined(separator: ", "))"
        }
        report(result.conflicts.isEmpty ? .info : .warning, text, path: path)
        return Reconciled(contents: result.contents, merged: true, kept: true, folio: written)
    }

    /// What ``reconcile(_:bytes:path:)`` found.
    struct Reconciled {
        /// What Folio takes the file to hold.
        var contents: PartitionFile.Contents
        /// Whether that is a merge, not the file itself.
        var merged: Bool
        /// Whether the file's bytes are a version Folio keeps.
        var kept: Bool
        /// Folio's newest version when the file is a person's save (an edit to adopt), else nil.
        var folio: PartitionFile.Contents? = nil
        /// The file's hash when it was already computed (it is what the partition remembers).
        var hash: ContentHash? = nil
    }

    /// A kept version, or nil if it is gone or damaged (it is then ignored).
    private func keptContents(_ version: KeptVersions.Version, path: String) throws(FolioError) -> PartitionFile.Contents? {
        guard let bytes = try keptVersions.bytes(of: version, path: path) else { return nil }
        do {
            return try PartitionFile.decode(bytes, path: path)
        } catch {
            return nil
        }
    }

    /// Notes the bytes of the file a partition was just loaded from (nil: no file).
    func noteFile(_ bytes: [UInt8]?, of partition: Partition, _ reconciled: Reconciled?, replacing replaced: [String: JSONValue]? = nil) {
        partition.fileHash = reconciled?.hash ?? bytes.map(ContentHash.init)
        partition.holdsMerge = reconciled?.merged == true
        partition.unkeptFile = reconciled?.kept == false ? bytes : nil
        noteEdit(partition.address, reconciled, replacing: replaced)
    }

    /// Brings a partition's file up to date with its committed state, replacing (or removing) it
    /// only if it still holds what Folio read; otherwise reads it again (merging the person's
    /// save) and retries, a few times. Returns nil when done, or the problem that leaves the
    /// partition's changes in the journal (the file is unreadable, or kept changing).
    /// - Parameter staged: The new version, staged and made durable by the checkpoint's barrier
    ///   (``stage(_:barrier:)``), for the first attempt; used only if the partition still holds
    ///   what was staged. Later attempts stage and sync their own.
    func writeUnlessChanged(_ partition: Partition, staged: StagedPartition? = nil) throws(FolioError) -> FolioError? {
        let path = partition.address.path
        let atomic = AtomicFile(fileSystem: fileSystem)
        var staged = staged
        defer { if let staged { atomic.discard(staged.file) } }
        for _ in 0..<Self.swapAttempts {
            if let problem = partition.unreadable { return problem }
            let outcome: AtomicFile.SwapOutcome
            if partition.entities.isEmpty && partition.versions.isEmpty {
                try noteWrite(path, nil)
                outcome = try removeUnlessChanged(partition)
            } else {
                let file: AtomicFile.Staged
                if let ready = staged, ready.contents == partition.contents {
                    file = ready.file
                    staged = nil
                } else {
                    if let stale = staged { atomic.discard(stale.file) }
                    staged = nil
                    // A barrier of its own, flushed at once: the kept version and the new content
                    // are durable before the file is replaced.
                    let barrier = DurabilityBarrier(fileSystem: fileSystem, kind: .perFile)
                    file = try stage(partition, barrier: barrier).file
                    try barrier.flush()
                }
                try noteWrite(path, ContentHash(file.bytes))
                outcome = try atomic.swapIn(file, ifStill: partition.identity == nil ? nil : partition.fileHash)
                if case .replaced = outcome { partition.fileHash = ContentHash(file.bytes) }
            }
            switch outcome {
            case .replaced(let identity):
                partition.markWritten(identity: identity)
                if identity == nil { partition.fileHash = nil }
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

    /// A partition's new version written beside its file, with the content it was made from.
    struct StagedPartition {
        let contents: PartitionFile.Contents
        let file: AtomicFile.Staged
    }

    /// Writes a partition's committed state to a temp file in its versions folder and keeps it
    /// as Folio's newest version, both durable once `barrier` is flushed; nothing is in place yet
    /// (``writeUnlessChanged(_:staged:)`` swaps it in).
    func stage(_ partition: Partition, barrier: DurabilityBarrier) throws(FolioError) -> StagedPartition {
        let path = partition.address.path
        let contents = partition.contents
        let bytes = PartitionFile.encode(contents)
        let folder = KeptVersions.folder(of: path)
        try barrier.makeDirectory(folder)
        keep(partition.unkeptFile, of: path, edit: true)
        // Must be kept before the file is replaced: a file whose bytes are not Folio's newest
        // version reads as a person's save, whose changes would be sent again.
        if !isReadOnly { try keptVersions.keep(bytes, of: path, barrier: barrier) }
        let file = try AtomicFile(fileSystem: fileSystem).stage(path, bytes, swapFolder: folder, sync: barrier.fileSync)
        return StagedPartition(contents: contents, file: file)
    }

    /// A save found while Folio swapped its file: merged into Folio's newest version at once, so
    /// that a save made from Folio's content while it stood in the file for a moment, or one that
    /// replaced this save meanwhile, is merged with it too.
    private func absorb(_ bytes: [UInt8], of path: String) {
        do {
            let reconciled = reconcile(try PartitionFile.decode(bytes, path: path), bytes: bytes, path: path)
            keep(PartitionFile.encode(reconciled.contents), of: path)
            // Adopted before the file is written as Folio's version (writeUnlessChanged).
            if let address = partitionAddress(of: path), let folio = reconciled.folio {
                handEdits.absorb(reconciled.contents, madeOn: folio, at: address)
            }
        } catch {
            // Most often an edit in place caught half-written; the file itself is read again.
            if !bytes.isEmpty { keep(bytes, of: path, edit: true) }
            report(.info, "a save met Folio's replace but does not parse (\(error.message)); it is kept in \(KeptVersions.folder(of: path))/ (hash \(ContentHash(bytes)))", path: path)
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
        let folioVersions = Set(try keptVersions.versions(of: path).filter { !$0.isEdit }.map(\.hash))
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

    /// Keeps a version of a partition file; a failure only costs the ability to merge a later save
    /// made from it, so it is reported, not thrown.
    func keep(_ bytes: [UInt8]?, of path: String, edit: Bool = false) {
        guard let bytes, !isReadOnly else { return }
        do {
            try keptVersions.keep(bytes, of: path, edit: edit)
        } catch {
            report(.warning, "cannot keep a version of this file (\(error.message)); a save made from it cannot be merged", path: path)
        }
    }
}
