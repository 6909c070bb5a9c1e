/// The outbox as this process knows it: the command files, plus the outbox changes of the
/// journal's current generation applied on top (like partitions: files + journal).
final class OutboxState {
    /// Where a command is.
    enum Location: Equatable {
        case pending(JSONValue)
        case failed(JSONValue, reason: JSONValue)
        case sent(JSONValue)
        case gone
    }

    /// Every command known, by sequence number.
    var commands: [UInt64: Location] = [:]
    /// Sequence numbers touched by the current generation's records: what the checkpoint writes.
    var touched: Set<UInt64> = []
    /// Command files that could not be read, moved (or to be moved) to `outbox/quarantine/`.
    var quarantined: [String: FolioError] = [:]
    /// The highest sequence number seen anywhere, files or journal.
    var highestSequence: UInt64 = 0

    func apply(_ change: JournalRecord.OutboxChange) {
        let sequence = change.sequence
        touched.insert(sequence)
        highestSequence = max(highestSequence, sequence)
        switch change {
        case .enqueue(_, let command):
            commands[sequence] = .pending(command)
        case .remove(_, let archive):
            if archive, case .pending(let command) = commands[sequence] {
                commands[sequence] = .sent(command)
            } else {
                commands[sequence] = .gone
            }
        case .fail(_, let reason):
            if case .pending(let command) = commands[sequence] {
                commands[sequence] = .failed(command, reason: reason)
            }
        case .retry:
            if case .failed(let command, _) = commands[sequence] {
                commands[sequence] = .pending(command)
            }
        }
    }

    var pending: [(sequence: UInt64, command: JSONValue)] {
        commands.compactMap { sequence, location in
            if case .pending(let command) = location { return (sequence, command) }
            return nil
        }.sorted { $0.sequence < $1.sequence }
    }

    /// The pending commands of one entity, in order (without sorting the whole queue: this runs
    /// for every change a commit enqueues).
    func pending(collection: String, id: String) -> [(sequence: UInt64, command: JSONValue)] {
        commands.compactMap { sequence, location -> (sequence: UInt64, command: JSONValue)? in
            guard case .pending(let command) = location, command["entityID"]?.stringValue == id,
                  command["collection"]?.stringValue == collection else { return nil }
            return (sequence, command)
        }.sorted { $0.sequence < $1.sequence }
    }

    var failed: [(sequence: UInt64, command: JSONValue, reason: JSONValue)] {
        commands.compactMap { sequence, location in
            if case .failed(let command, let reason) = location { return (sequence, command, reason) }
            return nil
        }.sorted { $0.sequence < $1.sequence }
    }

    /// Whether an unreadable command file still sits in the queue's folders.
    var needsQuarantineMove: Bool {
        quarantined.keys.contains { !$0.hasPrefix(StoreState.quarantineFolder) }
    }

    var sent: [UInt64] {
        commands.compactMap { sequence, location in
            if case .sent = location { return sequence }
            return nil
        }.sorted()
    }
}
