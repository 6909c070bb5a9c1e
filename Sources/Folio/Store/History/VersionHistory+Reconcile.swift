/// Reading a partition file that people may have edited: the file itself, or its merge with
/// what Folio wrote since the version it was saved from.
extension VersionHistory {
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
        if writtenHashes.current(fileSystem, fileLoads: context.fileLoadsSoFar)?.isLastWritten(hash, at: path)
            == true
        {
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
                let before = versions.last(where: { !$0.isEdit && $0.order < edit.order }), before.name != newest.name
            {
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
        // What the merge logs, and how loudly: nothing for a save already merged, read again.
        var logged: (level: LogMessage.Level, text: String)?
        switch base {
        case .older:
            // Folio's state stands, and the next checkpoint puts it back in the file (unless the
            // file holds the same entities: another copy's revision Folio adopted as it was).
            var same = contents
            same.revision = ours.revision
            return Reconciled(contents: ours, merged: same != ours, kept: true, newerVersion: true)
        case .merged:
            // Nothing in the save that Folio's state does not hold already.
            result = PartitionMerge.Result(contents: ours)
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
            let rule = DataFileName.address(of: path).flatMap { settings.editConflictRules[$0.collection] } ?? .fileFirst
            result = PartitionMerge.merge(base: baseContents, ours: ours, theirs: contents, rule: rule)
            logged = (
                result.conflicts.isEmpty ? .info : .warning,
                "saved from an older version than Folio's (\(KeptVersions.folder(of: path))/\(version.name)): merged"
                    + Self.listing("kept Folio's newer state of", result.keptFromFolio)
                    + Self.listing(
                        "changed on both sides, merged field by field with \(rule == .fileFirst ? "the file's" : "Folio's") values first:", result.conflicts)
            )
            if !result.conflicts.isEmpty {
                mergeReports.note(MergeReport(path: path, kind: .conflict, kept: result.keptFromFolio, changed: result.conflicts))
            }
        case .unknown:
            result = PartitionMerge.mergeWithoutBase(ours: ours, theirs: contents)
            let why = contents.revision == nil ? "names no revision" : "names a revision Folio does not keep (\(contents.revision!.text))"
            logged = (
                result.conflicts.isEmpty && result.keptFromFolio.isEmpty ? .info : .warning,
                "\(why), so its base is unknown: merged without deleting anything"
                    + Self.listing("kept, though the file lacks them:", result.keptFromFolio)
                    + Self.listing("took the file's values of", result.conflicts)
            )
            mergeReports.note(MergeReport(path: path, kind: .unknownBase, kept: result.keptFromFolio, changed: result.conflicts))
        }
        var merged = result.contents
        merged.revision = ours.revision
        if merged != ours {
            merged.revision = nextRevision(of: merged, after: joined, versions: versions)
            keep(PartitionFile.encode(merged), of: path, revision: merged.revision)
        }
        keepForeign()
        if let logged { report(logged.level, logged.text, path: path) }
        return Reconciled(contents: merged, merged: true, kept: true, folio: written)
    }

    /// `; <what> <count> entities (<the first five ids>)`, or nothing for no ids: a merge's log.
    private static func listing(_ what: String, _ ids: [String]) -> String {
        ids.isEmpty ? "" : "; \(what) \(ids.count) entities (\(ids.prefix(5).joined(separator: ", ")))"
    }

    /// What ``reconcile(_:bytes:path:)`` found.
    struct Reconciled {
        /// What Folio takes the file to hold.
        var contents: PartitionFile.Contents
        /// Whether that is a merge, not the file itself.
        var merged: Bool
        /// Whether the file's bytes are a version Folio keeps.
        var kept: Bool
        /// Whether `contents` is Folio's newest version alone, the file an older revision it
        /// includes (nothing of the file's is taken).
        var newerVersion = false
        /// Folio's newest version when the file is a person's save (an edit to adopt), else nil.
        var folio: PartitionFile.Contents? = nil
        /// The file's hash when it was already computed (it is what the partition remembers).
        var hash: ContentHash? = nil
    }
}
