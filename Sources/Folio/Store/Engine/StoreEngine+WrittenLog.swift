/// Keeping `.folio/written` (``WrittenLog``) and checking, at open, that a copy of a store holds
/// files and a journal that belong together (``CopyCheck``).
extension StoreEngine {
    /// What an open found about the folder's log of written files.
    enum FolderOrigin {
        /// The log names this folder: nothing to check.
        case original
        /// No log yet (a store from before it existed, or a new one): one is made from the files.
        case noLog
        /// A copy whose files and journal belong together: it becomes a store of its own.
        case consistentCopy
    }

    var writtenLog: WrittenLog { WrittenLog(fileSystem: fileSystem) }

    /// Checks, before anything is replayed or written, whether the folder is a copy and whether
    /// its files belong with its journal.
    /// - Throws: ``FolioError/Code/inconsistentCopy`` naming the first file that does not belong
    ///   (and how many more there are), and what to do.
    func checkOrigin() throws(FolioError) -> FolderOrigin {
        try refreshJournal()
        let header: WrittenLog.Contents
        do {
            // The header tells the store from a copy; only a copy needs the whole log read.
            guard let head = try writtenLog.head() else { return .noLog }
            header = head
        } catch let error where error.code == .corruptFile {
            report(.warning, "\(error.message); it is made again from the files", path: WrittenLog.path)
            if !isReadOnly { try fileSystem.unlink(WrittenLog.path) }
            return .noLog
        }
        let check = CopyCheck(fileSystem: fileSystem)
        guard try check.isCopy(header) else { return .original }
        guard let bytes = try writtenLog.bytes() else { return .noLog }
        let log = try WrittenLog.contents(bytes)
        let (findings, hashes) = try check.findings(log, firstTransaction: cursor.header?.firstTransaction, end: cursor.nextTransaction)
        if let first = findings.first { throw Self.inconsistentCopy(first, more: findings.count - 1) }
        if !isReadOnly { try dropKeptVersionsOfOtherInstants(hashes) }
        return .consistentCopy
    }

    /// The copied kept versions of a file may be from other instants than the file itself (copied
    /// before or after a checkpoint replaced it): recovery must not merge or adopt against them,
    /// or a file newer than them would read as a person's save. A file's versions are kept only
    /// when the newest is a version Folio wrote and holds exactly the file's bytes, or is the
    /// removal of a file the copy does not hold (the copy check has shown them to belong with the
    /// journal); the others are removed, and made again from
    /// the files when the copy becomes a store of its own (``settleOrigin(_:)``). Keeping them
    /// spares a copy's first open from writing a version of every file again.
    /// - Parameter hashes: The hash of every data file of the copy, from the copy check.
    private func dropKeptVersionsOfOtherInstants(_ hashes: [String: ContentHash]) throws(FolioError) {
        let kept = KeptVersions(fileSystem: fileSystem)
        func visit(_ folder: String) throws(FolioError) {
            for entry in try fileSystem.list(folder) where entry.isDirectory {
                let child = folder + "/" + entry.name
                guard entry.name.hasSuffix(".json") else {
                    try visit(child)
                    continue
                }
                let path = String(child.dropFirst(KeptVersions.folder.count + 1))
                // A file Folio removed has the removal (no entities) as its newest version.
                if let newest = try kept.versions(of: path).last, !newest.isEdit {
                    if let current = hashes[path] {
                        if newest.hash == current { continue }
                    } else if try kept.isRemoval(newest, path: path) {
                        continue
                    }
                }
                try fileSystem.removeTree(child)
            }
        }
        try visit(KeptVersions.folder)
    }

    static func inconsistentCopy(_ finding: CopyCheck.Finding, more: Int) -> FolioError {
        let others = more > 0 ? " (and \(more) more file\(more == 1 ? "" : "s"))" : ""
        return FolioError(
            .inconsistentCopy,
            "this folder is a copy of a store taken while Folio was writing it, and may hold part of a transaction: \(finding.message)\(others). Copy it again from a folder no process is writing, or make a consistent copy with `folio snapshot`; if you changed this file yourself in the copy, delete \(WrittenLog.path) to accept the copy as it is",
            path: finding.path)
    }

    /// Before recovery (its checkpoint is the first that could tear a copy): a store without a
    /// log gets one, made from its files as they are, the journal's records not yet applied
    /// (every version it names is then current as of the journal's start). This reads every
    /// file once, at the first read-write open of a store some other program made.
    func makeMissingLog(_ origin: FolderOrigin) throws(FolioError) {
        guard case .noLog = origin, !isReadOnly else { return }
        try rewriteWrittenLog(fromFiles: true)
    }

    /// After recovery: a consistent copy becomes a store of its
    /// own (its log names its own lock, its kept versions are its files, and it pulls anew).
    func settleOrigin(_ origin: FolderOrigin) throws(FolioError) {
        // A missing log was made before recovery (``makeMissingLog(_:)``).
        guard case .consistentCopy = origin, !isReadOnly else { return }
        report(.info, "this folder is a copy of a store, and its files and journal belong together; it is now a store of its own", path: nil)
        try rewriteWrittenLog(fromFiles: true, keepVersions: true)
        // What the original's processes sent and pulled is not this copy's to trust: count
        // every pending command as possibly sent, and pull from the beginning.
        try outbox.markEverythingMaySend()
        try fileSystem.unlink(StoreLayout.machinery + "/sync.json")
        try fileSystem.syncDirectory(StoreLayout.machinery)
    }

    /// Starts a checkpoint's run: opens `.folio/written` for its lines (making it from the files
    /// if it is gone).
    func beginCheckpointRun() throws(FolioError) -> CheckpointRun {
        guard !isReadOnly else { return CheckpointRun(appender: nil, cursor: cursor) }
        if try fileSystem.identity(WrittenLog.path) == nil { try rewriteWrittenLog(fromFiles: true) }
        return CheckpointRun(appender: try writtenLog.appender(), cursor: cursor)
    }

    /// Ends a checkpoint's lines (``CheckpointRun/finish(emptiesJournal:sync:)``), and compacts a
    /// large log.
    func finish(_ run: CheckpointRun, emptiesJournal: Bool, sync: Bool) throws(FolioError) {
        guard try run.finish(emptiesJournal: emptiesJournal, sync: sync) else { return }
        let size = try writtenLog.size()
        if size > WrittenLog.compactionSize, size > 2 * (try writtenLog.head()?.compactedSize ?? 0) {
            try rewriteWrittenLog(fromFiles: false, since: emptiesJournal ? cursor.nextTransaction : nil)
        }
    }

    /// Writes the log anew: from the files as they are now (hashing each), or by compacting the
    /// current log to the last line of each file. Only with the writers' lock held, after the
    /// journal's records are in the files (or at a checkpoint).
    /// - Parameter since: Where the log starts: the transaction the journal was (or is about to
    ///   be) emptied at; by default the journal's.
    func rewriteWrittenLog(fromFiles: Bool, keepVersions: Bool = false, since: UInt64? = nil) throws(FolioError) {
        guard let origin = try writtenLog.origin() else { return }
        let since = since ?? cursor.header?.firstTransaction ?? cursor.nextTransaction
        var latest: [String: WrittenLog.Entry] = [:]
        if !fromFiles, let log = try writtenLog.read() {
            for (path, entries) in log.history {
                guard let last = entries.last else { continue }
                // Removed command files are covered by gone-below; removed data files stay listed.
                if last.hash == nil && CommandFileName.sequence(ofPath: path) != nil { continue }
                latest[path] = last
            }
        } else {
            for path in try CopyCheck.dataAndCommandFiles(fileSystem) {
                guard let (bytes, _) = try fileSystem.read(path) else { continue }
                latest[path] = WrittenLog.Entry(transaction: since, hash: ContentHash(bytes))
                if keepVersions && CommandFileName.sequence(ofPath: path) == nil {
                    history.keep(bytes, of: path, revision: PartitionFile.namedRevision(bytes, path: path))
                }
            }
        }
        var lines = ""
        for (path, entry) in latest.sorted(by: { $0.key < $1.key }) { lines += WrittenLog.line(path, entry) }
        let header = WrittenLog.header(origin: origin, since: since, goneBelow: try nextSequence())
        try writtenLog.replace(with: header + WrittenLog.compactedLine(header.utf8.count + lines.utf8.count) + lines)
    }
}
