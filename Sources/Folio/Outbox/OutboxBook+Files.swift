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
        let outbox = queue.commands
        let touched = (outbox?.touched ?? Set(recordedChanges().changes.keys)).sorted()
        lastCheckpoint = [:]
        // The files are about to change, and may stay changed in this generation (a checkpoint
        // blocked by a broken data file does not reset the journal): read them anew.
        readCommands.forget()
        defer { readCommands.forget() }
        guard !touched.isEmpty || needsQuarantineMove else { return 0 }
        var written = 0

        let archive = Self.sentFolder + "/"
        // Whether a file is there: a `stat` each for a few commands; for many (an import writes
        // thousands, a drain removes them) the names in each folder, listed once and kept up to
        // date here (only this checkpoint, under the writers' lock, changes them).
        var listed: [String: Set<String>] = [:]
        let listsFolders = touched.count > 64
        func exists(_ path: String) throws(FolioError) -> Bool {
            guard listsFolders else { return try fileSystem.identity(path) != nil }
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
                if !path.hasPrefix(archive), CommandFileName.sequence(fromFileName: FileSystem.name(of: path)) != nil,
                    try setAsideIfNotOurs(path, ours: value, barrier: barrier)
                {
                    folders.insert(FileSystem.parent(of: path))
                    folders.insert(Self.quarantineFolder)
                }
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
        var locations: [UInt64: OutboxState.Location] = [:]
        for sequence in touched { locations[sequence] = try location(of: sequence) }
        lastCheckpoint = locations
        let archived = try fileSystem.list(Self.sentFolder).compactMap { CommandFileName.sequence(fromFileName: $0.name) }
        let sentNow = touched.filter { sequence in
            if case .sent(let command)? = locations[sequence] { return command != .null }
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
            switch locations[sequence] ?? .gone {
            case .pending(let command):
                try ensure(queued, command)
                for path in [failed, reason] where try exists(path) { afterCopies.append((path, false)) }
            case .failed(let command, let why):
                // The reason first: a process that lists failed/ meanwhile never finds a command
                // without its reason.
                try ensure(reason, why)
                try ensure(failed, command)
                afterCopies.append((queued, true))
            case .sent(let command) where command != .null && kept.contains(sequence):
                try ensure(sent, command)
                fallthrough
            case .sent, .gone:
                try remove(queued, leftQueue: true)
                // Retried from failed/ and acknowledged before a checkpoint wrote it back.
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
        for (path, problem) in (outbox?.quarantined ?? [:]).sorted(by: { $0.key < $1.key }) where !path.hasPrefix(Self.quarantineFolder) {
            guard try fileSystem.identity(path) != nil else { continue }
            let target = Self.quarantineFolder + "/" + FileSystem.name(of: path)
            try barrier.makeDirectory(Self.quarantineFolder)
            try noteWrite(path, nil)
            try fileSystem.rename(path, to: target)
            folders.insert(FileSystem.parent(of: path))
            folders.insert(Self.quarantineFolder)
            outbox?.quarantined[path] = nil
            outbox?.quarantined[target] = problem
            report(.error, "moved to \(target): \(problem.message)", path: path)
            written += 1
        }
        return written
    }

    /// Moves a whole command file of another command (another id) that sits where this command's
    /// file goes to `outbox/quarantine/`, never overwriting it: numbers come from the journal's
    /// header without listing the outbox, so a file put there by hand or by a copy tool with a
    /// number the store had not reached yet is kept for a person to look at. A file cut short,
    /// or one holding this very command, is this checkpoint's to write again.
    /// - Returns: Whether a file was moved.
    private func setAsideIfNotOurs(_ path: String, ours: JSONValue, barrier: DurabilityBarrier) throws(FolioError) -> Bool {
        guard let (bytes, _) = try fileSystem.read(path) else { return false }
        // What a crash leaves of a file written in place: a beginning of its bytes, perhaps with
        // zeros where blocks never reached the disk.
        let mine = JSONWriter.pretty(ours)
        if bytes.count <= mine.count, zip(bytes, mine).allSatisfy({ $0 == $1 || $0 == 0 }) { return false }
        let theirID: String
        do throws(FolioError) {
            theirID = (try readJSON(path)?["id"]?.stringValue) ?? "none"
        } catch  where error.code == .corruptFile {
            theirID = "unreadable"
        }
        guard theirID != ours["id"]?.stringValue else { return false }
        try barrier.makeDirectory(Self.quarantineFolder)
        var target = Self.quarantineFolder + "/" + FileSystem.name(of: path)
        var copy = 1
        while try fileSystem.identity(target) != nil {
            copy += 1
            target = Self.quarantineFolder + "/" + FileSystem.name(of: path) + ".\(copy)"
        }
        try fileSystem.rename(path, to: target)
        report(.error, "a file that is not this command (id \(theirID)) had its number; moved to \(target), a person decides what becomes of it", path: path)
        return true
    }

    /// The checkpoint wrote the command files and reset the journal: nothing of the current
    /// records remains to write.
    func checkpointed() {
        queue.checkpointed()
        readCommands.forget()
    }

    /// A journal began anew where there was none (a new store, or a reset cut short): when the
    /// outbox holds no command (no command file in `outbox/` or `outbox/failed/`), the entity index
    /// is saved empty for the new generation, so that the first checkpoint brings it up to date
    /// instead of reading back every command it wrote (a bulk import's thousands). Only with the
    /// writers' lock held. Derived data: a failure is logged, never thrown (the first checkpoint
    /// then builds the index from the outbox).
    /// - Parameter generation: The new journal's generation.
    func saveEntityIndexIfOutboxEmpty(generation: UInt64) {
        do throws(FolioError) {
            for folder in [Self.folder, Self.failedFolder] {
                let entries = try fileSystem.list(folder)
                if entries.contains(where: { !$0.isDirectory && CommandFileName.sequence(fromFileName: $0.name) != nil }) { return }
            }
            try OutboxEntityIndex.write([], generation: generation, to: fileSystem)
        } catch {
            report(
                .warning, "the outbox's empty entity index could not be saved (\(error.message)); the first checkpoint builds it", path: OutboxEntityIndex.path)
        }
    }

    /// Saves the entity index (``OutboxEntityIndex``) for the generation a checkpoint just
    /// started: the old index with the checkpoint's commands changed, only stamped anew when no
    /// command changed, or built from the whole outbox when there is none to bring up to date (a
    /// new store, one from before the index, a crash between a reset and this save). Called
    /// after the journal's reset, so an index never names a generation its files do not hold.
    /// Derived data: a failure is logged, never thrown, and the index removed (readers then read
    /// the outbox whole).
    /// - Parameters:
    ///   - old: The generation the checkpoint ended.
    ///   - new: The generation it started.
    func saveEntityIndex(from old: UInt64, to new: UInt64) {
        let changed = lastCheckpoint
        lastCheckpoint = [:]
        let wasRead = queue.commands != nil
        defer { if !wasRead { queue.forgetCommands() } }
        do throws(FolioError) {
            var lines: [OutboxEntityIndex.Line] = []
            func add(_ sequence: UInt64, _ location: OutboxState.Location) {
                guard let key = location.unacknowledgedCommand.flatMap(OutboxEntityIndex.key(of:)) else { return }
                lines.append(.init(key: key, sequence: sequence))
            }
            if let existing = try OutboxEntityIndex.open(in: fileSystem, generation: old) {
                if changed.isEmpty { return try OutboxEntityIndex.restamp(in: fileSystem, from: old, to: new) }
                if existing.changes.count + changed.count <= OutboxEntityIndex.changeLimit {
                    // This checkpoint's changes, appended: work that grows with them, not the queue.
                    var changes: [(added: Bool, line: OutboxEntityIndex.Line)] = []
                    for (sequence, location) in changed.sorted(by: { $0.key < $1.key }) {
                        switch location {
                        case .pending(let command), .failed(let command, _):
                            guard let key = OutboxEntityIndex.key(of: command) else { continue }
                            changes.append((true, .init(key: key, sequence: sequence)))
                        case .sent(let command):
                            changes.append((false, .init(key: OutboxEntityIndex.key(of: command) ?? 0, sequence: sequence)))
                        case .gone:
                            changes.append((false, .init(key: 0, sequence: sequence)))
                        }
                    }
                    return try OutboxEntityIndex.append(changes, in: fileSystem, from: old, to: new)
                }
                guard let all = try existing.allLines() else { return try OutboxEntityIndex.forget(in: fileSystem) }
                lines = all.filter { changed[$0.sequence] == nil }
                for (sequence, location) in changed { add(sequence, location) }
            } else {
                // The files now hold every record: the whole outbox, read (or as this process has it).
                let state = try loaded()
                for sequence in state.pendingSequences + state.failedSequences { add(sequence, state.commands[sequence] ?? .gone) }
            }
            try OutboxEntityIndex.write(lines, generation: new, to: fileSystem)
        } catch {
            report(
                .warning, "the outbox's entity index could not be saved (\(error.message)); the outbox is read whole until a checkpoint saves it",
                path: OutboxEntityIndex.path)
            do { try OutboxEntityIndex.forget(in: fileSystem) } catch {
                report(.warning, "and could not be removed (\(error.message)); it names an older generation and is not used", path: OutboxEntityIndex.path)
            }
        }
    }
}
