/// Partition files that people edit while Folio writes them: reading a save made from an older
/// version (merged three ways against the versions Folio keeps), and replacing a file only if it
/// is still the one Folio read (FORMAT.md, "Editing by hand").
extension StoreState {
    /// How often a checkpoint reads a file again and retries after finding it changed.
    static let swapAttempts = 8

    var keptVersions: KeptVersions { KeptVersions(fileSystem: fileSystem, retention: settings.historyRetention, byteLimit: settings.historyByteLimit) }

    /// What a partition file read from disk holds for Folio: the file itself, or, when it was saved
    /// from a version older than the newest Folio wrote (or comes from another copy of the store),
    /// its merge with what Folio wrote since, against the version it names as its base
    /// (``MergeBase``; FORMAT.md, "Editing by hand").
    ///
    /// Without kept versions the file is taken as it is. Never throws: versions that cannot be
    /// read are skipped (and reported).
    func reconcile(_ contents: PartitionFile.Contents, bytes: [UInt8], path: String) -> Reconciled {
        let hash = ContentHash(bytes)
        var reconciled = reconcile(contents, bytes: bytes, hash: hash, path: path)
        reconciled.hash = hash
        return reconciled
    }

    private func reconcile(_ contents: PartitionFile.Contents, bytes: [UInt8], hash: ContentHash, path: String) -> Reconciled {
        // What a checkpoint last wrote to the file: Folio's, without listing its kept versions.
        if writtenHashes.current(fileSystem, worthReading: statistics.fileLoads >= WrittenHashesCache.worthReadingAfter)?.isLastWritten(hash, at: path) == true {
            return Reconciled(contents: contents, merged: false, kept: true)
        }
        let versions: [KeptVersions.Version]
        let newest: KeptVersions.Version
        let ours: PartitionFile.Contents
        var written: PartitionFile.Contents?
        var isKept = false
        do {
            versions = try keptVersions.versions(of: path)
            // Ours: the newest version Folio wrote. Without one, Folio has no state of the file.
            guard let folios = versions.last(where: { !$0.isEdit }) else {
                // Folio's first look at the file (a fresh clone, a copied folder): an unedited
                // revision is kept as one, so a later file descending from it is merged against it.
                guard contents.isUneditedRevision, !isReadOnly else {
                    return Reconciled(contents: contents, merged: false, kept: false)
                }
                keep(bytes, of: path, revision: contents.revision)
                return Reconciled(contents: contents, merged: false, kept: true)
            }
            newest = folios
            if newest.hash == hash { return Reconciled(contents: contents, merged: false, kept: true) }
            isKept = versions.contains { $0.hash == hash }
            // Without Folio's newest version there is nothing to merge against.
            guard let newestContents = try keptContents(newest, path: path) else { return Reconciled(contents: contents, merged: false, kept: isKept) }
            ours = newestContents
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
        let base = MergeBase.find(contents, hash: hash, ours: ours, oursVersion: newest, versions: versions) { version in
            do { return try keptContents(version, path: path) } catch { return nil }
        }
        // A save is kept at once: a later save made from it (an editor reloads, a script reads
        // during a checkpoint) finds its base. An unedited revision of another copy is kept too
        // (a later file from that copy may name it as its base), but only after Folio's revision
        // that merges it: it is never Folio's newest version, and every revision kept is one that
        // Folio's newest includes.
        let foreign = contents.isUneditedRevision
        if !isKept, !isReadOnly, !foreign {
            keep(bytes, of: path, revision: contents.revision, edit: true)
        }
        func keepForeign() {
            if foreign, !isKept { keep(bytes, of: path, revision: contents.revision, edit: true) }
        }
        var joined = Revision.join(ours.revision?.vector ?? [:], contents.revision?.vector ?? [:])
        // A merge made from a save descends from it (``vector(of:versions:)`` names a save
        // taken in as it is, when a revision is next made from it).
        if !foreign, contents.revision != nil { joined[Revision.editKey(hash)] = Revision.currentSecond }
        let result: PartitionMerge.Result
        let text: String
        switch base {
        case .older:
            // Folio's state stands, and the next checkpoint puts it back in the file (unless the
            // file holds the same entities: another copy's revision Folio adopted as it was).
            var same = contents
            same.revision = ours.revision
            return Reconciled(contents: ours, merged: same != ours, kept: true)
        case .merged:
            // Nothing in the save that Folio's state does not hold already.
            result = PartitionMerge.Result(contents: ours)
            text = "a save already merged was read again"
        case .known(let version, _) where version.name == newest.name:
            // Made from Folio's newest version: the file as it is. Another copy's revision that
            // descends from it becomes Folio's next revision (the file itself stays as it is).
            guard foreign, !isReadOnly else { return Reconciled(contents: contents, merged: false, kept: true, folio: written) }
            var adopted = contents
            adopted.revision = nextRevision(of: contents, after: joined, versions: versions)
            keep(PartitionFile.encode(adopted), of: path, revision: adopted.revision)
            keepForeign()
            return Reconciled(contents: adopted, merged: false, kept: true, folio: written)
        case .known(let version, let baseContents):
            let rule = partitionAddress(of: path).flatMap { settings.editConflictRules[$0.collection] } ?? .fileFirst
            result = PartitionMerge.merge(base: baseContents, ours: ours, theirs: contents, rule: rule)
            text = "saved from an older version than Folio's (\(KeptVersions.folder(of: path))/\(version.name)): merged"
                + Self.listing("kept Folio's newer state of", result.keptFromFolio)
                + Self.listing("changed on both sides, merged field by field with \(rule == .fileFirst ? "the file's" : "Folio's") values first:", result.conflicts)
        case .unknown:
            result = PartitionMerge.mergeWithoutBase(ours: ours, theirs: contents)
            let why = contents.revision == nil ? "names no revision" : "names a revision Folio does not keep (\(contents.revision!.text))"
            text = "\(why), so its base is unknown: merged without deleting anything"
                + Self.listing("kept, though the file lacks them:", result.keptFromFolio)
                + Self.listing("took the file's values of", result.conflicts)
            mergeReports.note(MergeReport(path: path, kind: .unknownBase, kept: result.keptFromFolio, changed: result.conflicts))
        }
        var merged = result.contents
        merged.revision = ours.revision
        if merged != ours {
            merged.revision = nextRevision(of: merged, after: joined, versions: versions)
            keep(PartitionFile.encode(merged), of: path, revision: merged.revision)
        }
        keepForeign()
        if case .merged = base {} else {
            report(result.conflicts.isEmpty && !(base.isUnknown && !result.keptFromFolio.isEmpty) ? .info : .warning, text, path: path)
            if case .known = base, !result.conflicts.isEmpty {
                mergeReports.note(MergeReport(path: path, kind: .conflict, kept: result.keptFromFolio, changed: result.conflicts))
            }
        }
        return Reconciled(contents: merged, merged: true, kept: true, folio: written)
    }

    /// `; <what> <count> entities (<the first five ids>)`, or nothing for no ids: a merge's log.
    private static func listing(_ what: String, _ ids: [String]) -> String {
        ids.isEmpty ? "" : "; \(what) \(ids.count) entities (\(ids.prefix(5).joined(separator: ", ")))"
    }

    /// What a partition whose file is absent holds: nothing, as the revision of Folio's newest
    /// version of the file. Folio removes the file of a partition left empty and keeps the removal
    /// as its revision (``keepRemoval(of:)``); the next revision written must descend from it and
    /// from what it descends from, or a copy reading that next file would merge it against an old
    /// base and bring back what was deleted (the everyday-tools test's rsync and git rounds).
    func absentFileContents(at path: String) -> PartitionFile.Contents {
        var contents = PartitionFile.Contents(entities: [:], extra: [:])
        do {
            guard let newest = try keptVersions.versions(of: path).last(where: { !$0.isEdit }) else { return contents }
            contents.revision = try keptContents(newest, path: path)?.revision
        } catch {
            report(.warning, "cannot read the kept versions of this file (\(error.message)); its next revision names no ancestors", path: path)
        }
        return contents
    }

    /// What a partition's next revision descends from: its state's revision, and the file it was
    /// read from when that is a person's save (``Revision/editKey(_:)``), however it was read
    /// (taken in as it is, at a first look, or later as the version Folio kept of an adopted save
    /// left in place). The save is the file's kept version when that is not one this writer wrote
    /// (an edit, another writer's name, or a second version under one of this writer's numbers)
    /// and its content does not hash to the revision it names. The one place a revision made from
    /// a save names it; a merge names it when it is made (``reconcile(_:bytes:path:)``).
    private func vector(of partition: Partition, versions: [KeptVersions.Version]) -> [String: UInt64] {
        let vector = partition.revision?.vector ?? [:]
        guard let hash = partition.fileHash, vector[Revision.editKey(hash)] == nil,
              let version = versions.last(where: { $0.hash == hash }), let writer = version.writer else { return vector }
        let ownWrite = !version.isEdit && writer == writerID
            && !versions.contains { $0.writer == writer && $0.number == version.number && $0.hash != hash }
        guard !ownWrite else { return vector }
        do {
            guard let contents = try keptContents(version, path: partition.address.path) else { return vector }
            return Revision.join(vector, contents.namingSave(hash).revision?.vector ?? [:])
        } catch {
            return vector
        }
    }

    /// A new revision of this writer for `contents` (nil in a store opened read-only, which writes
    /// none): numbered past every revision of this writer kept of the file and past `vector`,
    /// descending from `vector`.
    func nextRevision(of contents: PartitionFile.Contents, after vector: [String: UInt64], versions: [KeptVersions.Version]) -> Revision? {
        guard WriterID.isValid(writerID) else { return nil }
        let number = KeptVersions.nextNumber(of: writerID, in: versions, after: vector[writerID] ?? 0)
        let ancestors = Revision.droppingSaves(vector, olderThan: max(settings.historyRetention, KeptVersions.defaultRetention),
                                               now: Revision.currentSecond)
        return Revision(writer: writerID, number: number, hash: contents.contentHash, ancestors: ancestors)
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
    func writeUnlessChanged(_ partition: Partition, staged: StagedPartition? = nil, run: CheckpointRun) throws(FolioError) -> FolioError? {
        let path = partition.address.path
        let atomic = AtomicFile(fileSystem: fileSystem)
        var staged = staged
        defer { if let staged { atomic.discard(staged.file) } }
        for _ in 0..<Self.swapAttempts {
            if let problem = partition.unreadable { return problem }
            let outcome: AtomicFile.SwapOutcome
            var revision: Revision?
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
                    let fresh = try stage(partition, barrier: barrier)
                    (file, revision) = (fresh.file, fresh.revision)
                    try barrier.flush()
                }
                try run.noteWrite(path, ContentHash(file.bytes))
                outcome = try atomic.swapIn(file, ifStill: partition.identity == nil ? nil : partition.fileHash)
                if case .replaced = outcome { partition.fileHash = ContentHash(file.bytes) }
            }
            switch outcome {
            case .replaced(let identity):
                partition.markWritten(identity: identity)
                partition.revision = revision
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

    /// A partition's new version written beside its file, with the content it was made from and
    /// the revision it names.
    struct StagedPartition {
        let contents: PartitionFile.Contents
        let revision: Revision?
        let file: AtomicFile.Staged
    }

    /// Writes a partition's committed state, as this writer's next revision of the file, to a temp
    /// file in its versions folder and keeps it as Folio's newest version, both durable once
    /// `barrier` is flushed; nothing is in place yet (``writeUnlessChanged(_:staged:run:)`` swaps it in).
    func stage(_ partition: Partition, barrier: DurabilityBarrier) throws(FolioError) -> StagedPartition {
        let path = partition.address.path
        let contents = partition.contents
        let folder = KeptVersions.folder(of: path)
        try barrier.makeDirectory(folder)
        keep(partition.unkeptFile, of: path, revision: partition.revision, edit: true)
        var revised = contents
        var listed: [KeptVersions.Version]?
        if !isReadOnly {
            let versions = try keptVersions.versions(of: path)
            revised.revision = nextRevision(of: contents, after: vector(of: partition, versions: versions), versions: versions)
            listed = versions
        }
        let bytes = PartitionFile.encode(revised)
        // Must be kept before the file is replaced: a file whose bytes are not Folio's newest
        // version reads as a person's save, whose changes would be sent again.
        if !isReadOnly { try keptVersions.keep(bytes, of: path, revision: revised.revision, barrier: barrier, listed: listed) }
        let file = try AtomicFile(fileSystem: fileSystem).stage(path, bytes, swapFolder: folder, sync: barrier.fileSync)
        return StagedPartition(contents: contents, revision: revised.revision, file: file)
    }

    /// Keeps the removal of a partition's file (no entities) as this writer's next revision of it,
    /// durable once `barrier` is flushed: a save from an older buffer of the file is merged
    /// against the removal and brings back nothing deleted.
    func keepRemoval(of partition: Partition, barrier: DurabilityBarrier) throws(FolioError) {
        guard !isReadOnly else { return }
        let path = partition.address.path
        keep(partition.unkeptFile, of: path, revision: partition.revision, edit: true)
        var removal = PartitionFile.Contents(entities: [:], extra: [:])
        let versions = try keptVersions.versions(of: path)
        removal.revision = nextRevision(of: removal, after: vector(of: partition, versions: versions), versions: versions)
        try keptVersions.keep(PartitionFile.encode(removal), of: path, revision: removal.revision, barrier: barrier)
    }

    /// A save found while Folio swapped its file: merged into Folio's newest version at once, so
    /// that a save made from Folio's content while it stood in the file for a moment, or one that
    /// replaced this save meanwhile, is merged with it too.
    private func absorb(_ bytes: [UInt8], of path: String) {
        do {
            let reconciled = reconcile(try PartitionFile.decode(bytes, path: path), bytes: bytes, path: path)
            keep(PartitionFile.encode(reconciled.contents), of: path, revision: reconciled.contents.revision)
            // Adopted before the file is written as Folio's version (writeUnlessChanged).
            if let address = partitionAddress(of: path), let folio = reconciled.folio {
                handEdits.absorb(reconciled.contents, madeOn: folio, at: address)
            }
        } catch {
            // Most often an edit in place caught half-written; the file itself is read again.
            if !bytes.isEmpty { keep(bytes, of: path, revision: nil, edit: true) }
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
    func keep(_ bytes: [UInt8]?, of path: String, revision: Revision?, edit: Bool = false) {
        guard let bytes, !isReadOnly else { return }
        do {
            let dropped = try keptVersions.keep(bytes, of: path, revision: revision, edit: edit)
            if dropped > 0 {
                report(.warning, "the history of this file passed its byte limit (\(settings.historyByteLimit) bytes): its \(dropped) oldest versions went; a save made from one of them is merged without a base (nothing is deleted by it)", path: path)
            }
        } catch {
            report(.warning, "cannot keep a version of this file (\(error.message)); a save made from it cannot be merged", path: path)
        }
    }
}
