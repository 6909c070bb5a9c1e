public import Foundation

extension Store {
    /// Makes a consistent snapshot of the store in a new folder, cheaply: hard links, not copies.
    ///
    /// Holds the lock that every writer and every checkpoint takes (in any process) while it works,
    /// so no transaction commits and no file is replaced meanwhile. Folio only ever replaces a data
    /// file, an outbox file or a state file by rename (or an atomic exchange), never in place, so
    /// a hard link to one is a frozen version of it: later writes to the store replace the name
    /// in the store and leave the snapshot's inode alone. The journal is the one file Folio changes
    /// in place (appends, truncation), so it is copied. The snapshot therefore holds the files and
    /// the journal as they were at one instant between two transactions: it opens (replaying its
    /// journal) to a state that is a prefix of the store's history, with every change and its
    /// outbox command together. It never checkpoints, so it costs one link per file plus a copy
    /// of the journal.
    ///
    /// Where a link is impossible (the destination is on another device, or the file system has
    /// no hard links) the file is copied instead, still under the lock. Skipped: `.folio/lock` and
    /// `.folio/tmp/`. To copy a live store to another machine, snapshot it on the same file
    /// system, then `rsync -a` the snapshot (README.md, "Copying a store").
    ///
    /// Edit nothing in the snapshot folder in place while the store it came from is in use: its
    /// files share their inodes with the store's (Folio itself never writes in place, and a
    /// store opened on the snapshot replaces its files by rename like any other).
    /// - Parameters:
    ///   - destination: A folder that does not exist yet, or is empty.
    ///   - progress: Called as files are linked or copied (``FolioProgress/Phase/linking``), on
    ///     the store's executor; nil (the default) for no reports.
    /// - Returns: How many files were linked and how many copied.
    /// - Throws: ``FolioError`` if the destination is not empty, or a file cannot be linked or
    ///   copied; the partial snapshot is left for you to delete.
    @discardableResult
    public func snapshot(to destination: URL, progress: ProgressHandler? = nil) async throws -> SnapshotReport {
        try await prepare()
        let exclusive = readOnlyReason == nil
        if exclusive {
            try await acquireWriterLock()
        } else {
            try await lock.acquire(exclusive: false)
        }
        defer { if exclusive { releaseWriterLock() } else { lock.release(exclusive: false) } }
        let target = FileSystem(root: destination.standardizedFileURL.path)
        try target.makeDirectoryDurably("")
        guard try target.list("").isEmpty else {
            throw FolioError(.io, "snapshot destination is not empty", path: destination.path)
        }
        // Copies go through the snapshot's own temp folder (temp, fsync, rename).
        try target.makeDirectoryDurably(StoreLayout.tempFolder)
        var report = SnapshotReport()
        var folders: Set<String> = ["", StoreLayout.machinery]
        let counter = try snapshotProgress(progress)
        try linkTree("", to: target, folders: &folders, report: &report, progress: counter)
        counter?.finish()
        for folder in folders.sorted() { try target.syncDirectory(folder) }
        return report
    }

    private func linkTree(
        _ folder: String, to target: FileSystem, folders: inout Set<String>,
        report: inout SnapshotReport, progress: ProgressCounter?
    ) throws(FolioError) {
        for entry in try fileSystem.list(folder).sorted(by: { $0.name < $1.name }) {
            let path = folder.isEmpty ? entry.name : folder + "/" + entry.name
            if path == StoreLayout.lockFile || path == StoreLayout.tempFolder { continue }
            if entry.isDirectory {
                try target.makeDirectoryDurably(path)
                folders.insert(path)
                try linkTree(path, to: target, folders: &folders, report: &report, progress: progress)
                continue
            }
            // The journal and the log of written files change in place: copied, not linked.
            if path != StoreLayout.journal && path != WrittenLog.path {
                let code = Platform.hardLink(fileSystem.absolute(path), target.absolute(path))
                if code == 0 {
                    report.linked += 1
                    progress?.advance()
                    continue
                }
                if Platform.isNotFound(code) { continue }
                guard Platform.cannotLink(code) else { throw .system("link", path: path, errno: code) }
            }
            if let (bytes, _) = try fileSystem.read(path) {
                try AtomicFile(fileSystem: target).replace(path, with: bytes)
                report.copied += 1
                progress?.advance()
            }
        }
    }
}

/// What ``Store/snapshot(to:progress:)`` did.
public struct SnapshotReport: Sendable, Equatable {
    /// Files hard-linked into the snapshot.
    public var linked = 0
    /// Files copied (the journal, and every file where a link was impossible).
    public var copied = 0

    /// An empty report.
    public init() {}
}
