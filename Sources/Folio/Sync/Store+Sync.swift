internal import Foundation

/// What the sync engine needs from the store beyond the public outbox API: the head of the queue,
/// the versions it sends, writes of server state that enqueue nothing, and a nudge when commands
/// are enqueued.
extension Store {
    /// The first commands of the queue, and what stops it.
    struct QueueHead {
        var commands: [OutboxCommand]
        var pendingCount: Int
        var quarantined: [FolioError]
    }

    func queueHead(limit: Int) async throws -> QueueHead {
        try await read { engine throws(FolioError) in
            let head = try engine.queueHead(limit: limit)
            let commands = try head.commands.map { command throws(FolioError) in
                try OutboxCommand(json: command.command, path: OutboxBook.folder + "/" + CommandFileName.name(command.sequence))
            }
            return QueueHead(commands: commands, pendingCount: head.pendingCount, quarantined: head.quarantined)
        }
    }

    /// The server version a command of an entity is sent on, as this store durably knows it (an
    /// acknowledgement or a pull stored it, ``StoreEngine/serverVersionAddress(collection:granularity:id:command:deletedFrom:locate:)``
    /// says where): nil if the server is not known to have the entity, `""` if it has it without
    /// a version.
    /// - Parameters:
    ///   - sequence: The command's number.
    ///   - deletedFrom: The partition the command deletes the entity from, if it is a delete.
    func storedVersion(
        collection: String, granularity: PartitionGranularity, id: String, command sequence: UInt64, deletedFrom: String?
    ) async throws -> String? {
        try await read { engine throws(FolioError) in
            let address = try engine.serverVersionAddress(
                collection: collection, granularity: granularity, id: id, command: sequence, deletedFrom: deletedFrom
            ) { () throws(FolioError) in
                try engine.locate(collection: collection, granularity: granularity, id: id)
            }
            guard let address else { return nil }
            return try engine.partition(address, verify: false).versions[id]
        }
    }

    /// Whether a later command of the entity waits in the queue.
    func hasLaterPendingCommand(after sequence: UInt64, collection: String, id: String) async throws -> Bool {
        try await read { engine throws(FolioError) in
            try engine.pendingCommands(collection: collection, id: id).contains { $0.sequence > sequence }
        }
    }

    /// Takes a command out of the queue without sending it (a change the server need not see).
    func dropCommand(_ sequence: UInt64) async throws {
        try await syncWrite { tx, _ in tx.outboxChanges.append(.remove(sequence: sequence, archive: false)) }
    }

    /// The granularity of a collection, from a registered type or from a partition key's form.
    func granularity(of collection: String, partition: String?) async -> PartitionGranularity? {
        engine.collections[collection] ?? PartitionGranularity.of(partition: partition)
    }

    /// A transaction of server state: its entity changes enqueue no command; `body` may add
    /// outbox changes (acknowledgements, drops) and versions. It is committed with relaxed
    /// durability: everything in it can be had from the server again (a lost acknowledgement
    /// means the command is sent again with the same idempotency key, and the server answers it
    /// from memory), so it costs no sync of its own; the next durable write or checkpoint syncs it.
    func syncWrite<R: Sendable>(_ body: @Sendable (Transaction, EntityCommands) throws -> R) async throws -> R {
        try await commitWrite(durability: .relaxed) { engine in
            let transaction = Transaction(engine: engine)
            transaction.isFromServer = true
            let result = try body(transaction, EntityCommands(engine: engine))
            return (result, try engine.commit(transaction))
        }
    }

    /// Logs `text` through the store's log handler (for the sync engine and the folder watcher).
    func report(_ level: LogMessage.Level, _ text: String) {
        engine.report(level, text)
    }

    // MARK: Cursors

    static let syncFile = ".folio/sync.json"

    /// The cursor of the last changes pull of a collection, from `.folio/sync.json`.
    func syncCursor(for collection: String) async throws -> String? {
        try await prepare()
        return try readSyncFile()["cursors"]?[collection]?.stringValue
    }

    /// Keeps the cursor of a changes pull (after its changes are stored).
    func setSyncCursor(_ cursor: String, for collection: String) async throws {
        try await prepare()
        try await acquireWriterLock()
        defer { releaseWriterLock() }
        var file = try readSyncFile().objectValue ?? [:]
        var cursors = file["cursors"]?.objectValue ?? [:]
        cursors[collection] = .string(cursor)
        file["cursors"] = .object(cursors)
        try AtomicFile(fileSystem: fileSystem).replace(Self.syncFile, with: JSONWriter.pretty(.object(file)))
        try fileSystem.syncDirectory(StoreLayout.machinery)
    }

    private func readSyncFile() throws(FolioError) -> JSONValue {
        guard let (bytes, _) = try fileSystem.read(Self.syncFile) else { return .object([:]) }
        do { return try JSONParser.parse(bytes) } catch {
            // Only cursors: losing them means pulling from the beginning again, which is safe.
            engine.report(.warning, "unreadable (\(error.message)); changes are pulled from the beginning", path: Self.syncFile)
            return .object([:])
        }
    }

    // MARK: Nudges

    /// Calls `listener` after every commit of this process that puts commands into the queue
    /// (a new command, a retried one). Returns a token for ``removeOutboxListener(_:)``.
    func addOutboxListener(_ listener: @escaping @Sendable () -> Void) -> UUID {
        let token = UUID()
        outboxListeners[token] = listener
        return token
    }

    func removeOutboxListener(_ token: UUID) {
        outboxListeners[token] = nil
    }

    /// Tells the listeners if the last commit queued commands.
    func notifyOutboxListenersIfQueued(since count: Int) {
        guard engine.queuedCommandCount != count else { return }
        for listener in outboxListeners.values { listener() }
    }
}

/// What a transaction of server state asks of the outbox: one entity's commands at a time, read
/// through the entity index, never the whole queue.
struct EntityCommands {
    fileprivate let engine: StoreEngine

    /// The entity's pending commands, in order.
    func pending(collection: String, id: String) throws(FolioError) -> [(sequence: UInt64, command: JSONValue)] {
        try engine.pendingCommands(collection: collection, id: id)
    }

    /// Where the server's version of the entity is kept for its command `sequence`
    /// (``StoreEngine/serverVersionAddress(collection:granularity:id:command:deletedFrom:locate:)``).
    func serverVersionAddress(
        collection: String, granularity: PartitionGranularity, id: String, command sequence: UInt64, deletedFrom: String?,
        locate: () throws(FolioError) -> PartitionAddress?
    ) throws(FolioError) -> PartitionAddress? {
        try engine.serverVersionAddress(
            collection: collection, granularity: granularity, id: id, command: sequence, deletedFrom: deletedFrom, locate: locate)
    }

    /// The entity's first command the server has not acknowledged, pending or failed (the one
    /// whose base the entity's local state was built on); nil when all are acknowledged.
    func firstUnacknowledged(collection: String, id: String) throws(FolioError) -> JSONValue? {
        try engine.unacknowledged(collection: collection, id: id).first?.location.unacknowledgedCommand
    }
}

extension Transaction {
    /// Stages the server's `entity` where it goes (``SyncedCollection/address(of:id:coder:)``),
    /// with `version`.
    func stageServerEntity(_ entity: JSONValue, id: String, of collection: SyncedCollection, version: String?) throws(FolioError) {
        let address = try collection.address(of: entity, id: id, coder: coder)
        try stageServerValue(entity, at: address, collection: collection.collection, granularity: collection.granularity, id: id, version: version)
    }
}
