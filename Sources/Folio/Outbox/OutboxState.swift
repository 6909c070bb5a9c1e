/// The outbox as this process knows it: the command files, plus the outbox changes of the
/// journal's current generation applied on top (like partitions: files + journal).
final class OutboxState {
    /// Where a command is.
    enum Location: Equatable {
        case pending(JSONValue)
        case failed(JSONValue, reason: JSONValue)
        case sent(JSONValue)
        case gone

        /// The command, while the server has not acknowledged it (pending or failed).
        var unacknowledgedCommand: JSONValue? {
            switch self {
            case .pending(let command), .failed(let command, _): command
            case .sent, .gone: nil
            }
        }
    }

    /// Every command known, by sequence number. Change it through ``set(_:_:)``, which keeps the
    /// indexes below.
    private(set) var commands: [UInt64: Location] = [:]
    /// Sequence numbers touched by the current generation's records: what the checkpoint writes.
    var touched: Set<UInt64> = []
    /// Command files that could not be read, moved (or to be moved) to `outbox/quarantine/`.
    var quarantined: [String: FolioError] = [:]
    /// The highest sequence number seen anywhere, files or journal.
    var highestSequence: UInt64 = 0

    // Indexes, so the sync engine's per-command questions (the head of the queue, an entity's
    // pending commands) do not scan the whole outbox: sorted arrays, binary-searched.
    /// The pending commands' numbers, in order.
    private(set) var pendingSequences: [UInt64] = []
    /// The failed commands' numbers, in order.
    private(set) var failedSequences: [UInt64] = []
    /// Per entity (`collection` NUL `id`), its pending commands' numbers, in order.
    private var pendingByEntity: [String: [UInt64]] = [:]

    func set(_ sequence: UInt64, _ location: Location) {
        let old = commands[sequence]
        commands[sequence] = location
        switch old {
        case .pending(let command)?:
            Self.remove(sequence, from: &pendingSequences)
            if let key = Self.entityKey(command) {
                Self.remove(sequence, from: &pendingByEntity[key, default: []])
                if pendingByEntity[key]?.isEmpty == true { pendingByEntity[key] = nil }
            }
        case .failed?: Self.remove(sequence, from: &failedSequences)
        default: break
        }
        switch location {
        case .pending(let command):
            Self.insert(sequence, into: &pendingSequences)
            if let key = Self.entityKey(command) { Self.insert(sequence, into: &pendingByEntity[key, default: []]) }
        case .failed: Self.insert(sequence, into: &failedSequences)
        default: break
        }
    }

    private static func entityKey(_ command: JSONValue) -> String? {
        guard let collection = command["collection"]?.stringValue, let id = command["entityID"]?.stringValue else { return nil }
        return collection + "\u{0}" + id
    }

    private static func insert(_ sequence: UInt64, into sorted: inout [UInt64]) {
        if let last = sorted.last, last < sequence { sorted.append(sequence); return }
        let index = sorted.sortedPosition(of: sequence)
        if index == sorted.count || sorted[index] != sequence { sorted.insert(sequence, at: index) }
    }

    private static func remove(_ sequence: UInt64, from sorted: inout [UInt64]) {
        let index = sorted.sortedPosition(of: sequence)
        if index < sorted.count && sorted[index] == sequence { sorted.remove(at: index) }
    }

    func apply(_ change: JournalRecord.OutboxChange) {
        let sequence = change.sequence
        touched.insert(sequence)
        highestSequence = max(highestSequence, sequence)
        let location = Self.location(commands[sequence] ?? .gone, after: change)
        if location != commands[sequence] { set(sequence, location) }
    }

    /// Where a command is after an outbox change, from where it was (FORMAT.md, "The outbox"):
    /// one rule for the whole outbox read and for a single command read on its own.
    static func location(_ location: Location, after change: JournalRecord.OutboxChange) -> Location {
        switch (change, location) {
        case (.enqueue(_, let command), _): return .pending(command)
        case (.remove(_, true), .pending(let command)): return .sent(command)
        case (.remove, _): return .gone
        case (.fail(_, let reason), .pending(let command)): return .failed(command, reason: reason)
        case (.retry, .failed(let command, _)): return .pending(command)
        case (.fail, _), (.retry, _): return location
        }
    }

    /// Where a command is after a generation's changes of it, from where its file puts it (nil:
    /// it has no file, or none was read): the changes begin with its enqueue then, and where they
    /// do not, it is gone. (A file for a command enqueued in the generation is a checkpoint's
    /// copy of the same record: the changes decide.)
    static func location(from file: Location?, after changes: [JournalRecord.OutboxChange]) -> Location {
        var location = beginsWithEnqueue(changes) ? .gone : (file ?? .gone)
        for change in changes { location = Self.location(location, after: change) }
        return location
    }

    /// Whether a command's changes begin with its enqueue (its file, if any, adds nothing).
    static func beginsWithEnqueue(_ changes: [JournalRecord.OutboxChange]) -> Bool {
        if case .enqueue? = changes.first { true } else { false }
    }

    var pending: [(sequence: UInt64, command: JSONValue)] { pending(pendingSequences) }

    /// The pending commands of one entity, in order.
    func pending(collection: String, id: String) -> [(sequence: UInt64, command: JSONValue)] {
        pending(pendingByEntity[collection + "\u{0}" + id] ?? [])
    }

    private func pending(_ sequences: [UInt64]) -> [(sequence: UInt64, command: JSONValue)] {
        sequences.compactMap { sequence in
            if case .pending(let command)? = commands[sequence] { return (sequence, command) }
            return nil
        }
    }

    var failed: [(sequence: UInt64, command: JSONValue, reason: JSONValue)] {
        failedSequences.compactMap { sequence in
            if case .failed(let command, let reason)? = commands[sequence] { return (sequence, command, reason) }
            return nil
        }
    }

    /// Whether an unreadable command file still sits in the queue's folders.
    var needsQuarantineMove: Bool {
        quarantined.keys.contains { !$0.hasPrefix(OutboxBook.quarantineFolder) }
    }

    var sent: [UInt64] {
        commands.compactMap { sequence, location in
            if case .sent = location { return sequence }
            return nil
        }.sorted()
    }
}

extension [UInt64] {
    /// Where `sequence` is, or goes, in this sorted array (a binary search).
    func sortedPosition(of sequence: UInt64) -> Int {
        var (low, high) = (0, count)
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Whether this sorted array holds `sequence`.
    func sortedContains(_ sequence: UInt64) -> Bool {
        let index = sortedPosition(of: sequence)
        return index < count && self[index] == sequence
    }
}
