internal import Foundation

/// A quick look at a store's folder, for `status`: what it shows and nothing more. The full pass
/// (``run(lock:)``) checks every file, which grows with the store and its outbox; this one reads
/// the marker, the journal, each partition's ids (from the saved id index where the file is
/// unchanged), the small machinery files, the names in the quarantine folders and the sent
/// archive, and of the outbox only the head of the queue and the failed commands.
///
/// Like the full pass it never writes and holds the readers' shared lock (when the lock file
/// exists) while it reads, so no checkpoint moves files under it and no writer appends.
extension FolderScan {
    /// What the glance read of the outbox.
    struct OutboxGlance {
        /// The first pending commands, in sending order.
        var head: [(sequence: UInt64, command: JSONValue)] = []
        /// How many commands are pending.
        var pendingCount = 0
        /// The failed commands, in order.
        var failed: [(sequence: UInt64, command: JSONValue, reason: JSONValue)] = []
        /// Command files met that could not be read (in `outbox/`, `outbox/failed/` or
        /// `outbox/quarantine/`).
        var unreadable: [FolioError] = []
    }

    /// Reads what `status` shows.
    /// - Parameter headLimit: How many pending commands to read at most.
    /// - Returns: The outbox's head, length and failed commands (nil when the folder is no store).
    /// - Throws: ``FolioError`` when the folder itself, or a command file that is there, cannot be
    ///   read (permissions, I/O).
    func glance(headLimit: Int) async throws -> OutboxGlance? {
        guard try checkMarker() else { return nil }
        let lock = await takeSharedLock()
        defer { if let lock { _ = Platform.unlock(lock); _ = Platform.close(lock) } }
        try checkJournal()
        countPartitions()
        if try fileSystem.identity(Store.attemptsFile) != nil { checkAttempts() }
        if try fileSystem.identity(Store.syncFile) != nil { checkSyncFile() }
        for folder in [OutboxBook.quarantineFolder, Self.quarantineFolder] { checkQuarantine(folder, what: nil) }
        listSentArchive()
        // The queue's head and the failed commands, as the store itself reads them
        // (`OutboxBook.head(limit:)`): the names in `outbox/` with the journal's records on top,
        // only the head's files read.
        let book = OutboxBook(fileSystem: fileSystem, log: nil, journal: ScannedJournal(header: journal.header, records: records))
        let head = try book.head(limit: headLimit)
        let failed = try book.failedCommands()
        // A full read (an unreadable file, a quarantined one) also knows the quarantined files.
        let unreadable = (book.commandsIfLoaded?.quarantined.values).map(Array.init) ?? head.quarantined
        return OutboxGlance(
            head: head.commands, pendingCount: head.pendingCount, failed: failed,
            unreadable: unreadable.sorted { ($0.path ?? "") < ($1.path ?? "") })
    }

    /// The names in `outbox/sent/` and the time of the newest (its file is not read).
    private func listSentArchive() {
        let sequences = list(OutboxBook.sentFolder).compactMap { entry in
            entry.isDirectory ? nil : CommandFileName.sequence(fromFileName: entry.name)
        }
        guard let newest = sequences.max() else { return }
        let path = OutboxBook.sentFolder + "/" + CommandFileName.name(newest)
        do {
            sentArchive.append((newest, try fileSystem.identity(path)?.modified ?? 0))
        } catch {
            report(.warning, .unreadable, path, "cannot be examined: \(error.message)")
        }
    }
}

/// The journal as a scan read it, for an ``OutboxBook`` that reads the outbox without opening the
/// store. The scan holds the readers' lock while the book reads: no writer appends meanwhile, so
/// the records read are all there are.
final class ScannedJournal: OutboxJournal {
    let header: Journal.Header?
    let records: [JournalRecord]

    init(header: Journal.Header?, records: [JournalRecord]) {
        self.header = header
        self.records = records
    }

    func mayHold(command sequence: UInt64) -> Bool {
        records.contains { $0.outbox.contains { $0.sequence == sequence } }
    }
}
