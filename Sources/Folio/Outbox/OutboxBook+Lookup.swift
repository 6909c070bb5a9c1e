/// Single commands without reading the whole outbox: a commit, a checkpoint, an acknowledgement
/// or a failure touches a few commands, and reads only their files, so its cost does not grow
/// with the number of commands waiting (a device offline for a month queues tens of thousands).
extension OutboxBook {
    /// The outbox changes of the journal's current generation, by command: the records this
    /// process took in, indexed once per generation and extended as records arrive.
    struct RecordedChanges {
        var generation: UInt64?
        var recordCount = 0
        var changes: [UInt64: [JournalRecord.OutboxChange]] = [:]
        var highestSequence: UInt64 = 0
        /// The commands enqueued, by their entity's key (``OutboxEntityIndex/key(of:)``).
        var enqueued: [UInt64: [UInt64]] = [:]
    }

    /// The current generation's outbox changes, by command.
    func recordedChanges() -> RecordedChanges {
        let records = journal.records
        if recorded.generation != journal.header?.generation || recorded.recordCount > records.count {
            recorded = RecordedChanges(generation: journal.header?.generation)
        }
        // Extended in place: a copy taken first would copy every dictionary at each new record
        // (a drain of thousands of commands between two checkpoints adds a record per window).
        for record in records[recorded.recordCount...] {
            for change in record.outbox {
                recorded.changes[change.sequence, default: []].append(change)
                recorded.highestSequence = max(recorded.highestSequence, change.sequence)
                if case .enqueue(let sequence, let command) = change, let key = OutboxEntityIndex.key(of: command) {
                    recorded.enqueued[key, default: []].append(sequence)
                }
            }
        }
        recorded.recordCount = records.count
        return recorded
    }

    /// Where a command is: from the whole outbox if this process read it, else from the command's
    /// own file (`outbox/`, then `outbox/failed/`) with the current generation's changes of it
    /// applied on top. A file that cannot be read makes the whole outbox be read, which decides
    /// what it is (cut short by a checkpoint, or quarantined).
    /// - Parameter sequence: The command's number.
    /// - Returns: Pending, failed, sent (from this generation's records) or gone.
    func location(of sequence: UInt64) throws(FolioError) -> OutboxState.Location {
        if let commands = queue.commands { return commands.commands[sequence] ?? .gone }
        let changes = recordedChanges().changes[sequence] ?? []
        var file: OutboxState.Location?
        if !OutboxState.beginsWithEnqueue(changes) {
            guard let fromFiles = try fileLocation(of: sequence) else { return try loaded().commands[sequence] ?? .gone }
            file = fromFiles
        }
        return OutboxState.location(from: file, after: changes)
    }

    /// An entity's commands not yet acknowledged (pending or failed), in order: from the whole
    /// outbox if this process read it, else from the entity index (``OutboxEntityIndex``) and the
    /// current generation's records, each candidate's file read to check it. Without an index for
    /// this generation, the whole outbox is read.
    /// - Parameters:
    ///   - collection: The entity's collection.
    ///   - id: The entity's id.
    ///   - index: The entity index, when the caller opened it (for many entities).
    func unacknowledged(
        collection: String, id: String, index: OutboxEntityIndex? = nil
    ) throws(FolioError) -> [(sequence: UInt64, location: OutboxState.Location)] {
        func fromState(_ state: OutboxState) -> [(sequence: UInt64, location: OutboxState.Location)] {
            var found = state.pending(collection: collection, id: id).map { ($0.sequence, OutboxState.Location.pending($0.command)) }
            for failed in state.failed
            where failed.command["collection"]?.stringValue == collection && failed.command["entityID"]?.stringValue == id {
                found.append((failed.sequence, .failed(failed.command, reason: failed.reason)))
            }
            return found.sorted { $0.0 < $1.0 }
        }
        if let state = queue.commands { return fromState(state) }
        let key = OutboxEntityIndex.key(collection: collection, id: id)
        let opened: OutboxEntityIndex?
        if let index { opened = index } else { opened = try openEntityIndex() }
        guard let opened, let indexed = try opened.sequences(key: key) else {
            return fromState(try loaded())
        }
        var found: [(sequence: UInt64, location: OutboxState.Location)] = []
        for sequence in Set(indexed + (recordedChanges().enqueued[key] ?? [])).sorted() {
            let location = try location(of: sequence)
            guard let command = location.unacknowledgedCommand, command["collection"]?.stringValue == collection,
                command["entityID"]?.stringValue == id
            else { continue }
            found.append((sequence, location))
        }
        // A file that could not be read had the whole outbox read: it decides.
        if let state = queue.commands { return fromState(state) }
        return found
    }

    /// Where each entity stands with the server, reading only their own commands (and the
    /// entity index once for many of them).
    func syncStatuses(collection: String, ids: [String]) throws(FolioError) -> [String: EntitySyncStatus] {
        if let state = queue.commands { return state.syncStatuses(collection: collection, ids: ids) }
        guard let index = try openEntityIndex() else { return try loaded().syncStatuses(collection: collection, ids: ids) }
        var result: [String: EntitySyncStatus] = [:]
        for id in ids {
            if let state = queue.commands { return state.syncStatuses(collection: collection, ids: ids) }
            let found = try unacknowledged(collection: collection, id: id, index: index)
            let failed = found.lazy.compactMap { found -> EntitySyncStatus? in
                guard case .failed(_, let reason) = found.location else { return nil }
                return .failed(
                    sequence: found.sequence, reason: reason["reason"]?.stringValue ?? "unknown",
                    status: reason["status"]?.integerValue.map { Int($0) })
            }.first
            result[id] = failed ?? (found.isEmpty ? .synced : .pending(commands: found.count))
        }
        return result
    }

    /// The entity index of the journal's current generation, open (kept for the generation); nil
    /// when there is none (not kept: another process's checkpoint writes it after its reset).
    private func openEntityIndex() throws(FolioError) -> OutboxEntityIndex? {
        guard let generation = journal.header?.generation else { return nil }
        if let opened = openedEntityIndex, opened.generation == generation { return opened.index }
        let index = try OutboxEntityIndex.open(in: fileSystem, generation: generation)
        openedEntityIndex = index.map { (generation, $0) }
        return index
    }

    /// An entity's pending commands, in order (``unacknowledged(collection:id:)`` without the
    /// failed ones).
    func pending(collection: String, id: String) throws(FolioError) -> [(sequence: UInt64, command: JSONValue)] {
        try unacknowledged(collection: collection, id: id).compactMap { found in
            if case .pending(let command) = found.location { return (found.sequence, command) }
            return nil
        }
    }

    /// The first pending commands in sending order, how many are pending, and the unreadable
    /// command files found: without reading the whole outbox, from the names in `outbox/` (listed
    /// once per journal generation) and the current generation's records, reading the first
    /// commands' files only. An unreadable file among them has the whole outbox read, which
    /// quarantines it; one further on stops the queue when the head reaches it.
    /// - Parameter limit: How many commands at most.
    func head(limit: Int) throws(FolioError) -> (commands: [(sequence: UInt64, command: JSONValue)], pendingCount: Int, quarantined: [FolioError]) {
        func fromState(_ state: OutboxState) -> (commands: [(sequence: UInt64, command: JSONValue)], pendingCount: Int, quarantined: [FolioError]) {
            (Array(state.pending.prefix(limit)), state.pendingSequences.count, state.quarantined.sorted { $0.key < $1.key }.map(\.value))
        }
        if let state = queue.commands { return fromState(state) }
        guard let generation = journal.header?.generation else { return fromState(try loaded()) }
        let quarantined = try fileSystem.list(Self.quarantineFolder).filter { !$0.isDirectory }
        if !quarantined.isEmpty { return fromState(try loaded()) }
        if queueView?.generation != generation {
            let names = try fileSystem.list(Self.folder).filter { !$0.isDirectory }
            queueView = QueueView(generation: generation, listed: names.compactMap { CommandFileName.sequence(fromFileName: $0.name) }.sorted())
        }
        guard var view = queueView else { return fromState(try loaded()) }
        // The records' changes on top of the listing, from the records not taken in yet: commands
        // they took out, commands they put in.
        let recorded = recordedChanges()
        let records = journal.records
        if view.recordCount > records.count { view = QueueView(generation: generation, listed: view.listed) }
        var touched = Set<UInt64>()
        for record in records[view.recordCount...] {
            for change in record.outbox { touched.insert(change.sequence) }
        }
        for sequence in touched.sorted() {
            let changes = recorded.changes[sequence] ?? []
            let wasListed = view.listed.sortedContains(sequence)
            var location: OutboxState.Location
            if wasListed || OutboxState.beginsWithEnqueue(changes) {
                location = OutboxState.location(from: wasListed ? .pending(.null) : nil, after: changes)
            } else {
                // Not in `outbox/`: a failed command the records retry, say (its file decides).
                location = try self.location(of: sequence)
                if let state = queue.commands { return fromState(state) }
            }
            let isPending = if case .pending = location { true } else { false }
            view.set(sequence, pending: isPending, listed: wasListed)
        }
        view.recordCount = records.count
        queueView = view
        var commands: [(sequence: UInt64, command: JSONValue)] = []
        var loadedWhole = false
        try view.forEachPending { sequence throws(FolioError) in
            guard commands.count < limit else { return false }
            let location = try location(of: sequence)
            if queue.commands != nil {
                loadedWhole = true
                return false
            }
            if case .pending(let command) = location { commands.append((sequence, command)) }
            return true
        }
        if loadedWhole, let state = queue.commands { return fromState(state) }
        return (commands, view.pendingCount, [])
    }

    /// The command's JSON wherever it is or was: its location, or its file when the records
    /// removed it (for telling whose sync status changed). Nil for a number never used.
    func command(_ sequence: UInt64) throws(FolioError) -> JSONValue? {
        switch try location(of: sequence) {
        case .pending(let json), .failed(let json, _), .sent(let json): return json
        case .gone:
            switch try fileLocation(of: sequence) {
            case .pending(let json)?, .failed(let json, _)?, .sent(let json)?: return json
            case .gone?, nil: return nil
            }
        }
    }

    /// Where the command's files say it is, records aside: nil when a file is there but cannot
    /// be read (the caller reads the whole outbox, which knows what to make of it).
    private func fileLocation(of sequence: UInt64) throws(FolioError) -> OutboxState.Location? {
        let name = CommandFileName.name(sequence)
        do throws(FolioError) {
            if let json = try readCommandIfPresent(Self.folder + "/" + name, sequence: sequence) { return .pending(json) }
            if let json = try readCommandIfPresent(Self.failedFolder + "/" + name, sequence: sequence) {
                return .failed(json, reason: try readReason(sequence))
            }
            return .gone
        } catch  where error.code == .corruptFile {
            return nil
        }
    }

    /// The highest command number known without reading the outbox: the journal's header says
    /// the next command gets at least its number, and every command made since is in a record.
    /// Nil without a header (the outbox's files then say).
    func highestSequenceWithoutFiles() -> UInt64? {
        guard let header = journal.header else { return nil }
        return max(header.nextSequence &- 1, recordedChanges().highestSequence)
    }
}
