internal import Foundation

/// The outbox: reading it, and the changes the sync engine (or the app) makes to it.
///
/// Every change here is a transaction of its own, through the journal, so it is all-or-nothing
/// and visible to every process like any other write.
extension Store {
    /// The commands waiting to be sent, in the order they will be sent.
    /// - Returns: The pending commands, lowest sequence number first.
    /// - Throws: ``FolioError`` if the outbox folder cannot be read.
    public func pendingCommands() async throws -> [OutboxCommand] {
        try await read { engine throws(FolioError) in
            try engine.loadedOutbox().pending.map { pending throws(FolioError) in
                try OutboxCommand(json: pending.command, path: OutboxBook.folder + "/" + CommandFileName.name(pending.sequence))
            }
        }
    }

    /// The commands that can never succeed, with why, in `outbox/failed/`.
    public func failedCommands() async throws -> [FailedCommand] {
        try await read { engine throws(FolioError) in
            try engine.loadedOutbox().failed.map { failed throws(FolioError) in
                FailedCommand(
                    command: try OutboxCommand(json: failed.command, path: OutboxBook.failedFolder + "/" + CommandFileName.name(failed.sequence)),
                    reason: failed.reason)
            }
        }
    }

    /// Command files that could not be read (a hand edit, a bad copy), moved to
    /// `outbox/quarantine/`. They are never deleted by Folio, and the sync engine does not send
    /// anything while one is there, since it cannot know what it held (one still in `outbox/` is
    /// found when the queue reaches it, or here, which reads the whole outbox): repair it and move
    /// it back, or delete it.
    /// - Returns: One error per file, naming it and saying what is wrong.
    public func quarantinedCommands() async throws -> [FolioError] {
        try await read { engine throws(FolioError) in
            try engine.loadedOutbox().quarantined.sorted { $0.key < $1.key }.map(\.value)
        }
    }

    /// How many commands wait to be sent: counted from the names in `outbox/` and the journal,
    /// without reading the command files (an unreadable one still in `outbox/` counts until
    /// something reads it and quarantines it).
    public func pendingCommandCount() async throws -> Int {
        try await read { engine throws(FolioError) in try engine.queueHead(limit: 0).pendingCount }
    }

    /// Whether any local change has not been acknowledged by the server yet (pending, failed,
    /// or in an unreadable command file).
    public func hasPendingChanges() async throws -> Bool {
        try await read { engine throws(FolioError) in
            let outbox = try engine.loadedOutbox()
            return !outbox.pendingSequences.isEmpty || !outbox.failedSequences.isEmpty || !outbox.quarantined.isEmpty
        }
    }

    /// Whether this entity has local changes the server has not acknowledged (pending or failed).
    /// - Parameters:
    ///   - type: The entity type.
    ///   - id: The entity's id.
    public func hasPendingChanges<E: Entity>(_ type: E.Type, id: E.ID) async throws -> Bool {
        let key = id.storageKey
        return try await read { engine throws(FolioError) in
            try !engine.unacknowledged(collection: E.collection, id: key).isEmpty
        }
    }

    /// Puts a failed command back into the queue under its original number, so it keeps its place
    /// before every later command (of its entity and of others).
    /// - Parameter sequence: The failed command's number.
    /// - Throws: ``FolioError`` with ``FolioError/Code/invalidQuery`` if no failed command has it.
    public func retryFailedCommand(_ sequence: UInt64) async throws {
        try await change(sequence, from: .failed, to: .retry(sequence: sequence))
    }

    /// Deletes a failed command for good: its change is never sent.
    /// - Parameter sequence: The failed command's number.
    public func dropFailedCommand(_ sequence: UInt64) async throws {
        try await change(sequence, from: .failed, to: .remove(sequence: sequence, archive: false))
    }

    /// Records that the server applied a command: it leaves the queue (kept in `outbox/sent/`,
    /// which holds the newest 100), and the entity's server version becomes `serverVersion`, the
    /// base of its next change. For sync engines; the built-in one calls it.
    /// - Parameters:
    ///   - sequence: The pending command's number.
    ///   - serverVersion: The entity's version the server answered with (its ETag), or nil if it
    ///     gave none.
    public func acknowledgeCommand(_ sequence: UInt64, serverVersion: String?) async throws {
        let found = try await acknowledge([Acknowledgement(sequence: sequence, version: serverVersion)], durability: nil)
        guard found.first == true else { throw Self.noSuch("pending", sequence) }
    }

    /// One command the server applied, as the sync engine acknowledges it: it leaves the queue
    /// (to `outbox/sent/`) and its entity takes `version` (`""` if none), and the server's JSON
    /// when given, checked against `collection`, and no later local change of the entity is pending.
    struct Acknowledgement: Sendable {
        var sequence: UInt64
        var version: String?
        var serverEntity: JSONValue?
        var collection: SyncedCollection?
        var advancingVersion: Bool = true
        /// The server's entity as it arrived, if the caller has its bytes: compared with the stored
        /// JSON without writing `serverEntity` out again.
        var serverEntityBytes: Data?
    }

    /// Acknowledges consecutive commands, in order, in one transaction (one journal record): the
    /// same changes as acknowledging them one after the other, for one append. A crash loses all
    /// of them or none; a lost acknowledgement only means sending the command again under its
    /// idempotency key, which the server answers from memory (PROTOCOL.md).
    /// - Returns: For each, whether it was pending (one that was not changes nothing).
    func acknowledge(_ acknowledgements: [Acknowledgement], durability: Durability?) async throws -> [Bool] {
        guard !acknowledgements.isEmpty else { return [] }
        let (found, warnings): ([Bool], [String]) = try await commitWrite(durability: durability) { engine in
            let transaction = Transaction(engine: engine)
            transaction.isFromServer = true
            var found: [Bool] = []
            var warnings: [String] = []
            var removed = Set<UInt64>()
            for acknowledgement in acknowledgements {
                let sequence = acknowledgement.sequence
                guard case .pending(let command) = try engine.outboxLocation(of: sequence), !removed.contains(sequence) else {
                    found.append(false)
                    continue
                }
                found.append(true)
                removed.insert(sequence)
                transaction.outboxChanges.append(.remove(sequence: sequence, archive: true))
                guard acknowledgement.advancingVersion else { continue }
                if let warning = try acknowledgement.stage(command, in: transaction, outbox: engine) {
                    warnings.append(warning)
                }
            }
            guard !removed.isEmpty else { return ((found, []), nil) }
            return ((found, warnings), try engine.commit(transaction))
        }
        for warning in warnings { engine.report(.warning, warning) }
        return found
    }

    /// Moves a command that can never succeed to `outbox/failed/`, with the reason. For sync
    /// engines; the built-in one calls it.
    /// - Parameters:
    ///   - sequence: The pending command's number.
    ///   - reason: Why it failed.
    public func failCommand(_ sequence: UInt64, reason: FailureReason) async throws {
        try await change(sequence, from: .pending, to: .fail(sequence: sequence, reason: reason.json(at: .now)), origin: .sync)
    }

    /// Tells the store, durably and before the first byte of any of them leaves, that these
    /// commands may reach the server (`.folio/sent.json`): from then on no process coalesces
    /// them away, and a migration does not rewrite them. A command another transaction removed
    /// since the queue was read (coalesced into a later one, dropped, acknowledged) is not
    /// marked, and neither is anything after it.
    ///
    /// For sync engines of your own: call it with the commands ``pendingCommands()`` gave, just
    /// before sending them, and send only those it returns. The built-in engine calls it for
    /// every window of the queue it sends.
    /// - Parameter commands: The commands about to be sent, in the queue's order.
    /// - Returns: The leading commands that are still pending, marked: send only these, and read
    ///   the queue again for the rest.
    /// - Throws: ``FolioError`` if the mark cannot be written durably (then send nothing).
    public func prepareToSend(_ commands: [OutboxCommand]) async throws -> [OutboxCommand] {
        guard !commands.isEmpty else { return [] }
        try await prepare()
        try await acquireWriterLock()
        defer { releaseWriterLock() }
        try engine.refreshJournal()
        let sendable = try engine.markMaySend(commands.map(\.sequence))
        return Array(commands.prefix(sendable))
    }

    /// Where a command must be for ``change(_:from:to:origin:)``.
    private enum Place: String {
        case pending, failed
    }

    /// Changes one command in a transaction of its own, if it is in `place`.
    private func change(
        _ sequence: UInt64, from place: Place, to change: JournalRecord.OutboxChange, origin: ChangeSet.Origin = .thisProcess
    ) async throws {
        try await commitWrite { engine in
            switch (try engine.outboxLocation(of: sequence), place) {
            case (.pending, .pending), (.failed, .failed): break
            default: throw Self.noSuch(place.rawValue, sequence)
            }
            let record = JournalRecord(transaction: engine.nextTransaction, changes: [], outbox: [change])
            return ((), try engine.append(record, origin: origin))
        }
    }

    private static func noSuch(_ kind: String, _ sequence: UInt64) -> FolioError {
        FolioError(.invalidQuery, "there is no \(kind) command \(sequence)")
    }
}

extension PartitionGranularity {
    /// The granularity a partition key's form implies (for collections this process has not
    /// registered).
    static func of(partition: String?) -> PartitionGranularity? {
        guard let partition else { return nil }
        if partition.isEmpty { return PartitionGranularity.none }
        if PartitionKey.day(parsing: partition) != nil { return .day }
        if PartitionKey.month(parsing: partition) != nil { return .month }
        return nil
    }
}

extension Store.Acknowledgement {
    /// Stages what the acknowledgement of `command` changes of its entity: its server version,
    /// and the server's JSON when it differs (see ``Store/acknowledge(_:durability:)``).
    /// - Returns: A warning for the log, when the server's JSON was unusable.
    fileprivate func stage(
        _ command: JSONValue, in tx: Transaction, outbox engine: StoreEngine
    ) throws -> String? {
        let operation = command["operation"]?.stringValue
        guard operation == "upsert" || operation == "delete", let name = command["collection"]?.stringValue,
            let id = command["entityID"]?.stringValue,
            let granularity = collection?.granularity ?? tx.registeredGranularity(of: name)
                ?? PartitionGranularity.of(partition: command["partition"]?.stringValue)
        else { return nil }
        try collection?.register(tx)
        if operation == "delete" {
            // The server no longer has it: its tombstone version goes.
            if let partition = command["partition"]?.stringValue {
                tx.stageServerVersion(nil, at: try PartitionAddress(collection: name, granularity: granularity, partitionText: partition), id: id)
            }
            return nil
        }
        // The entity's next command is sent on this version: it goes where that command looks.
        let live = try tx.address(of: id, collection: name, granularity: granularity)
        let pending = try engine.pendingCommands(collection: name, id: id)
        guard
            let address = try engine.serverVersionAddress(
                collection: name, granularity: granularity, id: id, command: sequence, deletedFrom: nil, pending: pending, locate: { live })
        else { return nil }
        if address != live {
            // Deleted here since (and maybe created again elsewhere): the server has this version
            // until the delete reaches it, and the delete must say so (If-Match), whichever
            // process sends it.
            tx.stageServerVersion(version ?? "", at: address, id: id)
            return nil
        }
        let later = pending.contains { $0.sequence > sequence }
        var warning: String?
        if !later, let serverEntity, let collection {
            // The usual answer to a push: the server holds exactly the JSON this store holds. The
            // entity then stays as it is, where it is (JSON this store wrote sits in the partition
            // its fields name), and only the version is new: no decoding of the server's copy.
            // Compared as bytes: strings that are only canonically equivalent are different JSON.
            if let local = try tx.json(at: address, id: id) {
                let stored = JSONWriter.compact(local)
                if serverEntityBytes.map({ $0.count == stored.count && $0.elementsEqual(stored) }) ?? (stored == JSONWriter.compact(serverEntity)) {
                    try tx.stageVersion(version ?? "", at: address, id: id)
                    return nil
                }
            }
            do {
                try tx.stageServerEntity(serverEntity, id: id, of: collection, version: version ?? "")
                return nil
            } catch {
                warning = "kept the local \(name)/\(id): the server's answer to command \(sequence) is unusable: \(error)"
            }
        }
        // Known to the server now, even when it gives no version: "" marks that.
        try tx.stageVersion(version ?? "", at: address, id: id)
        return warning
    }
}
