/// The history of each data file Folio keeps (`.folio/versions/`, ``KeptVersions``) and what it
/// is for: knowing Folio's own versions, merging a save made from an older one, and naming each
/// new revision's ancestors (FORMAT.md, "Editing by hand"). The version history component: it
/// owns the merges this process made (``MergeReports``) and every write under `.folio/versions/`;
/// it reads the settings (writer id, limits, conflict rules) and the read count through one
/// protocol (``HistoryContext``). Guarded as the engine is: only the ``Store`` actor calls it.
final class VersionHistory {
    let fileSystem: FileSystem
    private let log: LogHandler?
    /// Opened read-only: nothing is kept, and no revision is made.
    let isReadOnly: Bool
    /// What checkpoints last wrote to each file (`.folio/written`): Folio's own files without
    /// listing their kept versions. Shared with the engine, which keeps it current.
    let writtenHashes: WrittenHashesCache
    /// Merges this process made that the app may show (``Store/mergeReports()``).
    let mergeReports = MergeReports()
    unowned let context: any HistoryContext

    init(context: any HistoryContext, fileSystem: FileSystem, log: LogHandler?, isReadOnly: Bool, writtenHashes: WrittenHashesCache) {
        (self.context, self.fileSystem, self.log, self.isReadOnly, self.writtenHashes) = (context, fileSystem, log, isReadOnly, writtenHashes)
    }

    var settings: StoreSettings { context.settings }
    var writerID: String { settings.writerID }

    func report(_ level: LogMessage.Level, _ text: String, path: String? = nil) {
        log?(LogMessage(level: level, text: text, path: path))
    }

    /// The kept versions, with the configured limits.
    var keptVersions: KeptVersions { KeptVersions(fileSystem: fileSystem, retention: settings.historyRetention, byteLimit: settings.historyByteLimit) }

    /// A kept version, or nil if it is gone or damaged (it is then ignored).
    func keptContents(_ version: KeptVersions.Version, path: String) throws(FolioError) -> PartitionFile.Contents? {
        guard let bytes = try keptVersions.bytes(of: version, path: path) else { return nil }
        do { return try PartitionFile.decode(bytes, path: path) } catch { return nil }
    }

    /// A version of a partition file Folio keeps, by the hash of its bytes; nil when it is gone.
    func keptState(_ hash: ContentHash, of path: String) -> PartitionFile.Contents? {
        do {
            guard let version = try keptVersions.versions(of: path).last(where: { $0.hash == hash }) else { return nil }
            return try keptContents(version, path: path)
        } catch {
            return nil
        }
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

    /// Keeps a version of a partition file; a failure only costs the ability to merge a later save
    /// made from it, so it is reported, not thrown.
    func keep(_ bytes: [UInt8]?, of path: String, revision: Revision?, edit: Bool = false) {
        guard let bytes, !isReadOnly else { return }
        do {
            let dropped = try keptVersions.keep(bytes, of: path, revision: revision, edit: edit)
            if dropped > 0 {
                report(
                    .warning,
                    "the history of this file passed its byte limit (\(settings.historyByteLimit) bytes): its \(dropped) oldest versions went; a save made from one of them is merged without a base (nothing is deleted by it)",
                    path: path)
            }
        } catch {
            report(.warning, "cannot keep a version of this file (\(error.message)); a save made from it cannot be merged", path: path)
        }
    }

    /// Keeps `bytes` as Folio's newest version of the file at `path`, durable once `barrier` is
    /// flushed (an adopted save that stands as Folio's).
    func keepAsFolios(_ bytes: [UInt8], of path: String, revision: Revision?, barrier: DurabilityBarrier) throws(FolioError) {
        try keptVersions.keep(bytes, of: path, revision: revision, barrier: barrier)
    }
}

/// What the version history reads of the engine.
protocol HistoryContext: AnyObject {
    /// The store's settings: the writer id, the history's limits, the conflict rules.
    var settings: StoreSettings { get }
    /// How many partition files this process has read (``ReadStatistics/fileLoads``): past a few,
    /// `.folio/written` is worth reading to know Folio's own files.
    var fileLoadsSoFar: Int { get }
}
