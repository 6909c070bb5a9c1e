/// Writing the outbox's files at a checkpoint.
extension OutboxBook {
    /// Makes `outbox/`, `outbox/failed/` and `outbox/sent/` match the committed outbox for every
    /// command the journal's records touched, and moves unreadable command files to
    /// `outbox/quarantine/`. Idempotent: each step checks what is already there, so a checkpoint
    /// cut short by a crash is simply done again.
    ///
    /// Command files are written once, with their final bytes, and never rewritten: a failed
    /// command's file in `failed/` has the same bytes as it had in `outbox/`. They are written in
    /// place, without temp file and rename, and made durable by `barrier` (the caller flushes
    /// it before the journal is reset): until then the journal's records hold every byte of
    /// them, so a file a crash cut short is read from the journal (``loaded()``) and
    /// written again by the next checkpoint.
    /// - Parameters:
    ///   - folders: The folders whose entries changed, for the caller's directory syncs.
    ///   - barrier: What makes the files durable.
    ///   - noteWrite: Notes in the checkpoint's written log what a file will hold (nil: no file).
    /// - Returns: How many files were written or removed.
    func writeFiles(
        folders: inout Set<String>, barrier: DurabilityBarrier,
        noteWrite: (String, ContentHash?) throws(FolioError) -> Void
    ) throws(FolioError) -> Int {
        let needed = journal.records.contains { !$0.outbox.isEmpty } || needsQuarantineMove
        guard needed else { return 0 }
        let outbox = try loaded()
        var written = 0

        let archive = Self.sentFolder + "/"
        // The names in each folder, listed once and kept up to date here (only this checkpoint,
        // under the writers' lock, changes them): one directory read instead of a `stat` per
        // command file written or removed (an import writes thousands, a drain removes them).
        var listed: [String: Set<String>] = [:]
        func exists(_ path: String) throws(FolioError) -> Bool {
            let folder = FileSystem.parent(of: path)
            if listed[folder] == nil { listed[folder] = Set(try fileSystem.list(folder).map(\.name)) }
            return listed[folder]?.contains(FileSystem.name(of: path)) == true
        }
        func ensure(_ path: String, _ value: JSONValue) throws(FolioError) {
            let bytes = JSONWriter.pretty(value)
            if !path.hasPrefix(archive) { try noteWrite(path, ContentHash(bytes)) }
            let absent = try !exists(path)
            if !absent, let existing = try fileSystem.identity(path) {
                // Left by a checkpoint a crash cut short: kept if whole, else written again.
                if existing.size == Int64(bytes.count), try fileSystem.read(path)?.bytes == bytes { return }
            }
            try barrier.makeDirectory(FileSystem.parent(of: path))
            try fileSystem.writeInPlace(path, bytes, sync: barrier.fileSync, knownAbsent: absent)
            listed[FileSystem.parent(of: path)]?.insert(FileSystem.name(of: path))
            folders.insert(FileSystem.parent(of: path))
            written += 1
        }
        // A removal is recorded when there was a file, and always for a command that left the
        // queue (a crash after the unlink and before the log's append leaves no file to see).
        func remove(_ path: String, leftQueue: Bool = false) throws(FolioError) {
            let exists = try exists(path)
            if !path.hasPrefix(archive) && (exists || leftQueue) { try noteWrite(path, nil) }
            guard exists else { return }
            try fileSystem.unlink(path)
            listed[FileSystem.parent(of: path)]?.remove(FileSystem.name(of: path))
            folders.insert(FileSystem.parent(of: path))
            written += 1
        }

        // The archive keeps the newest sent commands: of those sent since the last checkpoint,
        // write only the ones that will stay (a drain of thousands writes 100 files, not thousands).
        let touched = outbox.touched.sorted()
        let archived = try fileSystem.list(Self.sentFolder).compactMap { CommandFileName.sequence(fromFileName: $0.name) }
        let sentNow = touched.filter { sequence in
            if case .sent(let command)? = outbox.commands[sequence] { return command != .null }
            return false
        }
        let kept = Set((archived + sentNow).sorted().suffix(Self.sentArchiveLimit))

        // A command that moves (failed, or retried) has its bytes in its old file, not in the
        // journal (its record says only "fail" or "retry"): the old file goes only once the new
        // one is durable.
        var afterCopies: [(path: String, leftQueue: Bool)] = []
        for sequence in touched {
            let name = CommandFileName.name(sequence)
            let queued = Self.folder + "/" + name
            let failed = Self.failedFolder + "/" + name
            let reason = Self.failedFolder + "/" + CommandFileName.reasonName(sequence)
            let sent = Self.sentFolder + "/" + name
            switch outbox.commands[sequence] ?? .gone {
            case .pending(let command):
                try ensure(queued, command)
                for path in [failed, reason] where try exists(path) { afterCopies.append((path, false)) }
            case .failed(let command, let why):
                // The reason first: a process that lists failed/ meanwhile never finds a command
                // without its reason.
                try ensure(reason, why)
                try ensure(failed, command)
                afterCopies.append((queued, true))
            case .sent(let command):
                if command != .null && kept.contains(sequence) { try ensure(sent, command) }
                try remove(queued, leftQueue: true)
            case .gone:
                try remove(queued, leftQueue: true)
                try remove(failed)
                try remove(reason)
            }
        }
        var hasOriginals = false
        for original in afterCopies where try exists(original.path) { hasOriginals = true }
        if hasOriginals {
            for folder in folders { barrier.noteFolder(folder) }
            try barrier.flush()
        }
        for original in afterCopies { try remove(original.path, leftQueue: original.leftQueue) }
        // Keep only the newest sent commands.
        for sequence in archived where !kept.contains(sequence) {
            try remove(Self.sentFolder + "/" + CommandFileName.name(sequence))
        }
        // Unreadable command files leave the queue, but are never deleted.
        for (path, problem) in outbox.quarantined.sorted(by: { $0.key < $1.key }) where !path.hasPrefix(Self.quarantineFolder) {
            guard try fileSystem.identity(path) != nil else { continue }
            let target = Self.quarantineFolder + "/" + FileSystem.name(of: path)
            try barrier.makeDirectory(Self.quarantineFolder)
            try noteWrite(path, nil)
            try fileSystem.rename(path, to: target)
            folders.insert(FileSystem.parent(of: path))
            folders.insert(Self.quarantineFolder)
            outbox.quarantined[path] = nil
            outbox.quarantined[target] = problem
            report(.error, "moved to \(target): \(problem.message)", path: path)
            written += 1
        }
        return written
    }

    /// The checkpoint wrote the command files: nothing of the current records remains to write.
    func checkpointed() { queue.checkpointed() }
}
