/// Each new revision of a data file: what it descends from, its number, and the version kept
/// before the file is replaced.
extension VersionHistory {
    /// What a partition's next revision descends from: its state's revision, and the file it was
    /// read from when that is a person's save (``Revision/editKey(_:)``), however it was read
    /// (taken in as it is, at a first look, or later as the version Folio kept of an adopted save
    /// left in place). The save is the file's kept version when that is not one this writer wrote
    /// (an edit, another writer's name, or a second version under one of this writer's numbers)
    /// and its content does not hash to the revision it names. The one place a revision made from
    /// a save names it; a merge names it when it is made (``reconcile(_:bytes:path:)``).
    func vector(of partition: Partition, versions: [KeptVersions.Version]) -> [String: UInt64] {
        let vector = partition.revision?.vector ?? [:]
        guard let hash = partition.fileHash, vector[Revision.editKey(hash)] == nil,
            let version = versions.last(where: { $0.hash == hash }), let writer = version.writer
        else { return vector }
        let ownWrite =
            !version.isEdit && writer == writerID
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
        let ancestors = Revision.droppingSaves(
            vector, olderThan: max(settings.historyRetention, KeptVersions.defaultRetention),
            now: Revision.currentSecond)
        return Revision(writer: writerID, number: number, hash: contents.contentHash, ancestors: ancestors)
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
}
