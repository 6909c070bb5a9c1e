internal import Foundation

/// What the outbox book needs of the journal: the current generation's records (applied on top
/// of the command files), the header's next command number, and whether a record may hold a
/// command whose file a checkpoint is writing.
protocol OutboxJournal: AnyObject {
    /// The journal's header as last read (nil: none yet).
    var header: Journal.Header? { get }
    /// The records of the current generation this process has taken in.
    var records: [JournalRecord] { get }
    /// Whether a record of the current generation (taken in or not yet) changes this command.
    func mayHold(command sequence: UInt64) throws(FolioError) -> Bool
}

extension JournalCursor: OutboxJournal {}

/// The outbox book: everything this process knows of the outbox, and every file the store keeps
/// for it.
///
/// It owns the queue in memory (``OutboxQueue``: the commands once read, each collection's sync
/// mode, what may be in flight, how many were queued), reading the command files (`outbox/`,
/// `outbox/failed/`, `outbox/sent/`, `outbox/quarantine/`), the commands a commit enqueues
/// (`OutboxBook+Enqueue`), the sent mark (`.folio/sent.json`, `OutboxBook+SentMark`) and writing
/// the files at a checkpoint (`OutboxBook+Files`). It knows the journal only through
/// ``OutboxJournal`` and partitions only through what the store passes in. Like the rest of the
/// store's state it is used only from the ``Store`` actor; what it writes, it writes under the
/// writers' lock.
final class OutboxBook {
    static let folder = "outbox"
    static let failedFolder = "outbox/failed"
    static let sentFolder = "outbox/sent"
    static let quarantineFolder = "outbox/quarantine"
    /// How many sent commands `outbox/sent/` keeps (the newest).
    static let sentArchiveLimit = 100

    let fileSystem: FileSystem
    let log: LogHandler?
    let journal: any OutboxJournal
    /// The queue in memory.
    let queue = OutboxQueue()
    /// The current generation's outbox changes by command (``recordedChanges()``).
    var recorded = RecordedChanges()
    /// Where the last checkpoint's commands went, for the entity index it saves once the journal
    /// was reset (``saveEntityIndex(from:to:)``).
    var lastCheckpoint: [UInt64: OutboxState.Location] = [:]
    /// The queue as ``head(limit:)`` saw it last, in a journal generation.
    var queueView: QueueView?
    /// The entity index opened in a journal generation (only a checkpoint, which starts a new
    /// one, changes the file), for ``openEntityIndex()``.
    var openedEntityIndex: (generation: UInt64, index: OutboxEntityIndex)?
    /// The command files read lately in the journal's generation (``readCommandIfPresent(_:sequence:remember:)``).
    var readCommands = CommandFileCache()

    init(fileSystem: FileSystem, log: LogHandler?, journal: any OutboxJournal) {
        self.fileSystem = fileSystem
        self.log = log
        self.journal = journal
    }

    func report(_ level: LogMessage.Level, _ text: String, path: String? = nil) {
        log?(LogMessage(level: level, text: text, path: path))
    }

    // MARK: The queue

    /// The commands, if this process has read them since the last generation (nil otherwise).
    var commandsIfLoaded: OutboxState? { queue.commands }
    /// How many commands applied records queued (new or retried).
    var queuedCommands: Int { queue.queuedCommands }
    /// The sync mode of each collection registered by this process.
    var syncModes: [String: SyncMode] { queue.syncModes }
    /// Registers a collection's sync mode (the app opened it with its type).
    func register(_ mode: SyncMode, for collection: String) { queue.register(mode, for: collection) }
    /// Applies a journal record's outbox changes.
    func apply(_ changes: [JournalRecord.OutboxChange]) { queue.apply(changes) }
    /// Another process checkpointed: the files hold what the records held, read again on next use.
    func forgetCommands() {
        queue.forgetCommands()
        readCommands.forget()
    }
    /// Whether unreadable command files wait to be moved to `outbox/quarantine/`.
    var needsQuarantineMove: Bool { queue.commands?.needsQuarantineMove == true }

    // MARK: Reading the files

    /// The outbox, read from its files on first use (records of the current generation applied).
    func loaded() throws(FolioError) -> OutboxState {
        if let commands = queue.commands { return commands }
        let state = OutboxState()
        for (folder, isFailed) in [(Self.folder, false), (Self.failedFolder, true)] {
            for entry in try fileSystem.list(folder) where !entry.isDirectory {
                guard let sequence = CommandFileName.sequence(fromFileName: entry.name) else {
                    if entry.name.hasSuffix(CommandFileName.suffix) && CommandFileName.sequence(fromReasonFileName: entry.name) == nil {
                        report(.warning, "not a command file name (expected 20 digits and .json); ignored", path: folder + "/" + entry.name)
                    }
                    continue
                }
                let path = folder + "/" + entry.name
                state.highestSequence = max(state.highestSequence, sequence)
                do throws(FolioError) {
                    // The whole outbox, read once and kept by the queue: not worth keeping file by file.
                    guard let command = try readCommandIfPresent(path, sequence: sequence, remember: false) else {
                        throw FolioError(.corruptFile, "command file vanished", path: path)
                    }
                    state.set(sequence, isFailed ? .failed(command, reason: try readReason(sequence)) : .pending(command))
                } catch {
                    // A file a checkpoint is writing, or one a crash cut short: the journal holds
                    // its command, and the checkpoint writes it again. Records committed since this
                    // process last read the journal count too (another process may be
                    // checkpointing them now); if the journal started a new generation meanwhile,
                    // the files were complete before it did, and the next read, which starts from
                    // that generation, loads them again.
                    if try journal.mayHold(command: sequence) { continue }
                    state.quarantined[path] = error
                    report(.error, "\(error.message); the command is quarantined and the queue stops before it until it is fixed or dropped", path: path)
                }
            }
        }
        for sequence in try fileSystem.list(Self.sentFolder).compactMap({ CommandFileName.sequence(fromFileName: $0.name) }) {
            state.highestSequence = max(state.highestSequence, sequence)
            if state.commands[sequence] == nil { state.set(sequence, .sent(.null)) }
        }
        for entry in try fileSystem.list(Self.quarantineFolder) where !entry.isDirectory {
            if let sequence = CommandFileName.sequence(fromFileName: entry.name) {
                state.highestSequence = max(state.highestSequence, sequence)
            }
            let path = Self.quarantineFolder + "/" + entry.name
            state.quarantined[path] = FolioError(.corruptFile, "a quarantined command file: repair it and move it back to outbox/, or delete it", path: path)
        }
        for record in journal.records {
            for change in record.outbox { state.apply(change) }
        }
        queue.keep(state)
        return state
    }

    func readJSON(_ path: String) throws(FolioError) -> JSONValue? {
        guard let (bytes, _) = try fileSystem.read(path) else { return nil }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw FolioError(.corruptFile, "invalid JSON: \(error.message)", path: path, line: error.line, column: error.column)
        }
    }

    /// A failed command's reason, from its file in `outbox/failed/` (a stand-in when there is none).
    func readReason(_ sequence: UInt64) throws(FolioError) -> JSONValue {
        let path = Self.failedFolder + "/" + CommandFileName.reasonName(sequence)
        return try readJSON(path) ?? .object(["reason": .string("unknown (no reason file)")])
    }

    /// The command in a command file, checked against its name; nil when there is no file.
    ///
    /// A file read whole in the journal's current generation is not read again in it
    /// (``CommandFileCache``): only a file that is not there, or cannot be read, is looked at
    /// anew each time.
    /// - Parameter remember: Whether to keep what was read for the next look at this file.
    func readCommandIfPresent(_ path: String, sequence: UInt64, remember: Bool = true) throws(FolioError) -> JSONValue? {
        let generation = journal.header?.generation
        if let kept = readCommands.command(at: path, generation: generation) { return kept }
        guard let json = try readJSON(path) else { return nil }
        let command = try OutboxCommand(json: json, path: path)
        guard command.sequence == sequence else {
            throw FolioError(.corruptFile, "the file's name says command \(sequence) but it holds \(command.sequence)", path: path)
        }
        if remember { readCommands.keep(json, at: path, generation: generation) }
        return json
    }

    /// The number the next enqueued command gets: past every number the journal's header and
    /// records know (without reading the outbox), and past every command file when the outbox
    /// was read or there is no header yet.
    func nextSequence() throws(FolioError) -> UInt64 {
        if queue.commands == nil, let highest = highestSequenceWithoutFiles() { return highest + 1 }
        let outbox = try loaded()
        return max(outbox.highestSequence, (journal.header?.nextSequence ?? 1) - 1) + 1
    }
}
