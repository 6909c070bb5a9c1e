public import Foundation

extension Store {
    /// Checks a store's folder against FORMAT.md, without opening it and without writing anything.
    ///
    /// It reads every file: the format marker, each partition file (valid JSON, the documented
    /// shape, valid names, ids unique within a collection across its partitions, each file where
    /// its key says), the journal (header, checksums, a torn tail), the outbox (file names and
    /// numbering, each command's shape, failed commands and their reasons, the sent archive,
    /// quarantined files), `.folio/attempts.json`, `.folio/sync.json`, the indexes, leftover temp
    /// files, and files that are not data (sync-tool conflict copies, rsync temps, editor backups).
    /// Problems are values with a file, a line and column where known, and a message a person can
    /// act on.
    ///
    /// It never writes, not even the lock file: it takes the readers' shared lock when the lock
    /// file exists, so a checkpoint of another process cannot run while it reads. It can run
    /// while an app has the store open, for example at launch before ``open(at:configuration:)``.
    /// - Parameters:
    ///   - url: The store's folder.
    ///   - progress: Called as files are read (``FolioProgress/Phase/checking``, counting the
    ///     folder's files), on the scan's thread, once the folder is known to be a store (a folder
    ///     without `folio.json` reports nothing); nil (the default) for no reports.
    /// - Returns: Every problem found; ``VerificationReport/isHealthy`` when none is an error.
    /// - Throws: ``FolioError`` with ``FolioError/Code/io`` if the folder does not exist or cannot be
    ///   read. A folder that is not a store is a problem in the report, not a throw.
    public static func verify(at url: URL, progress: ProgressHandler? = nil) async throws -> VerificationReport {
        try await verify(at: url, progress: progress, phase: .checking)
    }

    /// ``verify(at:progress:)``, reporting its progress as `phase`.
    static func verify(at url: URL, progress: ProgressHandler?, phase: FolioProgress.Phase) async throws -> VerificationReport {
        let scan = FolderScan(root: url, progress: progress, phase: phase)
        try await scan.run()
        return VerificationReport(problems: scan.problems, filesChecked: scan.filesChecked, entitiesChecked: scan.entitiesChecked)
    }
}
