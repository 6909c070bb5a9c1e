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
    }

    /// The current generation's outbox changes, by command.
    func recordedChanges() -> RecordedChanges {
        let records = journal.records
        var index = recorded
        if index.generation != journal.header?.generation || index.recordCount > records.count {
            index = RecordedChanges(generation: journal.header?.generation)
        }
        for record in records[index.recordCount...] {
            for change in record.outbox {
                index.changes[change.sequence, default: []].append(change)
                index.highestSequence = max(index.highestSequence, change.sequence)
            }
        }
        index.recordCount = records.count
        recorded = index
        return index
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
        var location = OutboxState.Location.gone
        if changes.first.map({ if case .enqueue = $0 { return false } else { return true } }) ?? true {
            guard let fromFiles = try fileLocation(of: sequence) else { return try loaded().commands[sequence] ?? .gone }
            location = fromFiles
        }
        for change in changes { location = OutboxState.location(location, after: change) }
        return location
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
                let reason = try readJSON(Self.failedFolder + "/" + CommandFileName.reasonName(sequence))
                return .failed(json, reason: reason ?? .object(["reason": .string("unknown (no reason file)")]))
            }
            return .gone
        } catch where error.code == .corruptFile {
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
