public import Foundation

extension Store {
    /// Repairs a store's folder after a crash or a bad copy, and says what it did.
    ///
    /// Under the writers' lock it moves every file that cannot be read to `.folio/quarantine/`
    /// (same relative path; never deleted): a partition file that is not valid JSON or not in the
    /// format, a damaged `attempts.json` or `sync.json`, a journal with a record that cannot be
    /// applied. It deletes damaged indexes (derived data). Then it opens the store, which removes
    /// leftover temp files, replays the journal's committed transactions into the files, drops a
    /// torn tail, and moves unreadable command files to `outbox/quarantine/`; and it closes it.
    ///
    /// - warning: The entities of a quarantined partition file are out of the store until a person
    ///   repairs the file and merges it back (changes committed to that partition meanwhile are in a
    ///   new file at the old path). A quarantined journal's unapplied transactions are not applied.
    ///   Each such action says so in its message.
    ///
    /// Everything it writes is durable when it returns (renames, files and folders synced).
    /// Running it on a healthy store changes nothing but an empty journal's header.
    /// - Parameters:
    ///   - url: The store's folder.
    ///   - progress: Called as it goes, on its thread: ``FolioProgress/Phase/checking`` for its
    ///     first read of the folder, ``FolioProgress/Phase/repairing`` for the second under the
    ///     writers' lock, ``FolioProgress/Phase/verifying`` for the check afterwards, each
    ///     counting files. Nil (the default) for no reports.
    /// - Returns: What was done, and a verification of the folder afterwards.
    /// - Throws: ``FolioError``: ``FolioError/Code/unsupportedFormat`` if the folder is not a Folio
    ///   store or its `folio.json` is damaged (recovery never guesses a store's identity: fix it by
    ///   hand), ``FolioError/Code/io`` if a file cannot be moved or written.
    public static func recover(at url: URL, progress: ProgressHandler? = nil) async throws -> RecoveryReport {
        let fileSystem = FileSystem(root: url.standardizedFileURL.path)
        let before = FolderScan(root: url, progress: progress)
        try await before.run()
        guard before.isStore else {
            throw FolioError(.unsupportedFormat, "not a Folio store: there is no folio.json; recover does not create stores", path: url.path)
        }
        if let marker = before.problems.first(where: { $0.kind == .marker && $0.severity == .error }) {
            throw FolioError(.unsupportedFormat, "\(marker.description); recover cannot repair the format marker, fix it by hand", path: StoreLayout.marker)
        }

        var actions: [RecoveryReport.Action] = []
        func did(_ kind: RecoveryReport.Action.Kind, _ path: String, _ message: String) {
            actions.append(.init(kind: kind, path: path, message: message))
        }
        let lock = try FileLock(fileSystem: fileSystem)
        defer { lock.close() }
        try await lock.acquire(exclusive: true)
        let scan = FolderScan(root: url, progress: progress, phase: .repairing)
        do {
            try await scan.run(lock: false)
            if scan.journal.damage != nil || scan.unreadableFiles.contains(StoreLayout.journal) {
                actions.append(try salvageJournal(in: fileSystem))
            }
            for path in scan.unreadableFiles where path != StoreLayout.journal {
                let target = try quarantine(path, in: fileSystem)
                did(.quarantined, path, quarantineMessage(path, target: target, scan: scan))
            }
            for path in scan.damagedDerivedFiles {
                try fileSystem.unlink(path)
                try fileSystem.syncDirectory(FileSystem.parent(of: path))
                did(.removedDerivedFile, path, "deleted a damaged index; Folio rebuilds it when needed")
            }
            // Files moved aside and a salvaged journal are not what checkpoints recorded: the
            // open below makes `.folio/written` anew from the files.
            if !actions.isEmpty { try fileSystem.unlink(WrittenLog.path) }
        } catch {
            lock.release(exclusive: true)
            throw error
        }
        lock.release(exclusive: true)

        let commandQuarantineBefore = Set(try fileSystem.list(OutboxBook.quarantineFolder).map(\.name))
        let store = try await Store.open(at: url)
        do {
            // Loading the outbox finds unreadable command files; the checkpoint moves them.
            _ = try await store.quarantinedCommands()
            try await store.checkpoint()
            try await store.close()
        } catch {
            do { try await store.close() } catch let closing {
                throw FolioError((error as? FolioError)?.code ?? .io, "\(error); closing the store afterwards failed too: \(closing)")
            }
            throw error
        }

        if !scan.records.isEmpty {
            did(.replayedJournal, StoreLayout.journal, "wrote \(scan.records.count) committed transaction(s) from the journal to the files")
        }
        if scan.journal.tornBytes > 0 && scan.journal.damage == nil {
            did(.droppedTornTail, StoreLayout.journal, "dropped \(scan.journal.tornBytes) bytes of a transaction that never committed (cut by a crash)")
        }
        for path in scan.leftoverTempFiles.sorted() {
            did(.removedTempFile, path, "removed a temp file left by a crash (the file it was replacing is intact)")
        }
        for name in try fileSystem.list(OutboxBook.quarantineFolder).map(\.name).sorted() where !commandQuarantineBefore.contains(name) {
            did(
                .quarantined, OutboxBook.folder + "/" + name,
                "moved an unreadable command file to \(OutboxBook.quarantineFolder)/\(name): the sync engine sends nothing until it is repaired and moved back, or deleted"
            )
        }
        return RecoveryReport(actions: actions, remaining: try await verify(at: url, progress: progress, phase: .verifying))
    }

    /// Moves a file to `.folio/quarantine/<its path>` (a numbered name if one is there already),
    /// durably. Only with the writers' lock held.
    static func quarantine(_ path: String, in fileSystem: FileSystem) throws(FolioError) -> String {
        let machinery = StoreLayout.machinery + "/"
        let relative = path.hasPrefix(machinery) ? String(path.dropFirst(machinery.count)) : path
        var target = FolderScan.quarantineFolder + "/" + relative
        var number = 1
        while try fileSystem.identity(target) != nil {
            number += 1
            target = FolderScan.quarantineFolder + "/" + relative + "." + String(number)
        }
        try fileSystem.makeDirectoryDurably(FileSystem.parent(of: target))
        try fileSystem.rename(path, to: target)
        try fileSystem.syncDirectory(FileSystem.parent(of: path))
        try fileSystem.syncDirectory(FileSystem.parent(of: target))
        return target
    }

    private static func quarantineMessage(_ path: String, target: String, scan: FolderScan) -> String {
        let why =
            scan.problems.first { $0.path == path && $0.severity <= .warning }.map { problem in
                (problem.line.map { "line \($0)" + (problem.column.map { ", column \($0)" } ?? "") + ": " } ?? "")
                    + String(problem.message.prefix { $0 != ";" })
            } ?? "unreadable"
        switch path {
        case StoreLayout.journal:
            return
                "moved to \(target) (\(why)); its transactions that were not in the files yet are NOT applied: they are lost unless someone extracts them from that file"
        case Store.attemptsFile:
            return "moved to \(target) (\(why)); retry counts start again"
        case Store.syncFile:
            return "moved to \(target) (\(why)); the next changes pull starts from the beginning"
        default:
            let pending = scan.records.reduce(0) { count, record in count + record.changes.filter { $0.address.path == path }.count }
            let journalNote = pending == 0 ? "" : "; \(pending) committed change(s) to it from the journal are in a new \(path)"
            return "moved to \(target) (\(why)): its entities are out of the store until you repair it and merge it back into \(path) by hand\(journalNote)"
        }
    }
}
