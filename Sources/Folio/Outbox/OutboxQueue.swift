/// What this process knows of the outbox queue: its commands (``OutboxState``, loaded from the
/// files on first use and dropped when another process checkpoints), the sync mode of each
/// collection registered here, which commands may be on their way to the server, and how many
/// commands this process has seen queued.
///
/// Reading the command files is the outbox book's (OutboxBook.swift): the queue holds
/// what was read and keeps it current as journal records are applied.
final class OutboxQueue {
    /// The commands, once loaded (nil until then, and after another process's checkpoint).
    private(set) var commands: OutboxState?
    /// The sync mode of each collection registered by this process.
    private(set) var syncModes: [String: SyncMode] = [:]
    /// Commands up to this number may be on their way to the server: never coalesce them.
    private(set) var inFlightThrough: UInt64 = 0
    /// How many commands applied records put into the queue (new or retried) since the queue was
    /// made: the sync engine is nudged when it grows.
    private(set) var queuedCommands = 0

    /// Registers a collection's sync mode (the app opened it with its type).
    func register(_ mode: SyncMode, for collection: String) {
        syncModes[collection] = mode
    }

    /// Whether changes to the collection enqueue commands (false for one never registered).
    func pushes(_ collection: String) -> Bool {
        (syncModes[collection]?.kind ?? .localOnly) == .push
    }

    /// Whether the collection coalesces its pending commands (false for one never registered).
    func coalesces(_ collection: String) -> Bool {
        syncModes[collection]?.coalescing == true
    }

    /// Keeps the commands just read from the files (records of the current generation applied).
    func keep(_ loaded: OutboxState) {
        commands = loaded
    }

    /// Drops the commands read: another process checkpointed, so the files hold what the records
    /// held and are read again on next use. Counts and marks stay.
    func forgetCommands() {
        commands = nil
    }

    /// Applies a journal record's outbox changes: to the commands, if loaded, and to the count of
    /// queued ones (an enqueue or a retry).
    func apply(_ changes: [JournalRecord.OutboxChange]) {
        for change in changes {
            commands?.apply(change)
            switch change {
            case .enqueue, .retry: queuedCommands += 1
            case .remove, .fail: continue
            }
        }
    }

    /// Notes that commands up to `sequence` may be on their way to the server (never lowers it).
    func markInFlight(through sequence: UInt64) {
        inFlightThrough = max(inFlightThrough, sequence)
    }

    /// The checkpoint wrote the command files: nothing of the current records remains to write.
    func checkpointed() {
        commands?.touched = []
    }
}
