internal import Foundation

/// The outbox in the store's state: loading its files, enqueueing commands at commit time, and
/// writing its files at checkpoints.
extension StoreState {
    static let outboxFolder = "outbox"
    static let failedFolder = "outbox/failed"
    static let sentFolder = "outbox/sent"
    static let quarantineFolder = "outbox/quarantine"
    /// How many sent commands `outbox/sent/` keeps (the newest).
    static let sentArchiveLimit = 100

    /// The outbox, loaded from its files on first use (records of the current generation applied).
    func loadedOutbox() throws(FolioError) -> OutboxState {
        if let commands = outbox.commands { return commands }
        let state = OutboxState()
        for (folder, isFailed) in [(Self.outboxFolder, false), (Self.failedFolder, true)] {
            for entry in try fileSystem.list(folder) where !entry.isDirectory {
                guard let sequence = CommandFileName.sequence(fromFileName: entry.name) else {
                    if entry.name.hasSuffix(CommandFileName.suffix) && CommandFileName.sequence(fromReasonFileName: entry.name) == nil {
                        report(.warning, "not a command file name (expected 20 digits and .json); ignored", path: folder + "/" + entry.name)
                    }
                    continue
                }
                let path = folder + "/" + entry.name
                state.highestSequence = max(state.highestSequence, sequence)
                do {
                    let command = try readCommand(path, sequence: sequence)
                    if isFailed {
                        let reasonPath = folder + "/" + CommandFileName.reasonName(sequence)
                        let reason = try readJSON(reasonPath) ?? .object(["reason": .string("unknown (no reason file)")])
                        state.set(sequence, .failed(command, reason: reason))
                    } else {
                        state.set(sequence, .pending(command))
                    }
                } catch {
                    // A file a checkpoint is writing, or one a crash cut short: the journal holds
                    // its command, and the checkpoint writes it again.
                    if try journalHolds(sequence) { continue }
                    state.quarantined[path] = error
                    report(.error, "\(error.message); the command is quarantined and the queue stops before it until it is fixed or dropped", path: path)
                }
            }
        }
        for entry in try fileSystem.list(Self.sentFolder) {
            if let sequence = CommandFileName.sequence(fromFileName: entry.name) {
                state.highestSequence = max(state.highestSequence, sequence)
                if state.commands[sequence] == nil { state.set(sequence, .sent(.null)) }
            }
        }
        for entry in try fileSystem.list(Self.quarantineFolder) where !entry.isDirectory {
            if let sequence = CommandFileName.sequence(fromFileName: entry.name) {
                state.highestSequence = max(state.highestSequence, sequence)
            }
            let path = Self.quarantineFolder + "/" + entry.name
            state.quarantined[path] = FolioError(.corruptFile, "a quarantined command file: repair it and move it back to outbox/, or delete it", path: path)
        }
        for record in cursor.records {
            for change in record.outbox { state.apply(change) }
        }
        outbox.keep(state)
        return state
    }

    /// Whether a record of the journal's current generation changes this command: then its
    /// files may be ones a checkpoint is writing in place, or a crash cut short, and the records
    /// (applied on top of the files) say what they hold. Looks at records committed since this
    /// process last read the journal too (another process may be checkpointing them now); if
    /// the journal started a new generation meanwhile, the files were complete before it did,
    /// and the next read, which starts from that generation, loads them again.
    func journalHolds(_ sequence: UInt64) throws(FolioError) -> Bool {
        try cursor.mayHold(command: sequence)
    }

    private func readJSON(_ path: String) throws(FolioError) -> JSONValue? {
        guard let (bytes, _) = try fileSystem.read(path) else { return nil }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw FolioError(.corruptFile, "invalid JSON: \(error.message)", path: path, line: error.line, column: error.column)
        }
    }

    private func readCommand(_ path: String, sequence: UInt64) throws(FolioError) -> JSONValue {
        guard let json = try readJSON(path) else {
            throw FolioError(.corruptFile, "command file vanished", path: path)
        }
        let command = try OutboxCommand(json: json, path: path)
        guard command.sequence == sequence else {
            throw FolioError(.corruptFile, "the file's name says command \(sequence) but it holds \(command.sequence)", path: path)
        }
        return json
    }

    /// The number the next enqueued command gets.
    func nextSequence() throws(FolioError) -> UInt64 {
        let outbox = try loadedOutbox()
        return max(outbox.highestSequence, (cursor.header?.nextSequence ?? 1) - 1) + 1
    }

    // MARK: Enqueueing at commit

    /// The outbox changes for a transaction's entity changes: one command per entity of a push
    /// collection that changed (its final state), coalesced where the collection asks for it,
    /// plus the transaction's custom commands.
    /// - Parameter staging: The order in which the transaction touched its entities; commands
    ///   follow it.
    func outboxChanges(for changes: [JournalRecord.Change], order staging: [(collection: String, id: String)],
                       custom: [Transaction.CustomCommand],
                       priors: [String: [String: (entity: JSONValue?, version: String?)]] = [:]) throws(FolioError) -> [JournalRecord.OutboxChange] {
        struct Final { var address: PartitionAddress; var entity: JSONValue?; var touched: [PartitionAddress] }
        var finals: [String: [String: Final]] = [:]
        for change in changes where self.outbox.pushes(change.address.collection) {
            let collection = change.address.collection
            var final = finals[collection]?[change.id] ?? Final(address: change.address, entity: nil, touched: [])
            final.touched.append(change.address)
            // A move removes from one partition and sets in another: the set wins.
            if change.entity != nil || final.entity == nil {
                final.address = change.address
                final.entity = change.entity
            }
            finals[collection, default: [:]][change.id] = final
        }
        var seen = Set<String>()
        let order = staging.filter { finals[$0.collection]?[$0.id] != nil && seen.insert($0.collection + "/" + $0.id).inserted }
        guard !order.isEmpty || !custom.isEmpty else { return [] }
        let outbox = try loadedOutbox()
        var sequence = try nextSequence()
        var result: [JournalRecord.OutboxChange] = []
        let now = Date()
        let writer = commandIDPrefix
        for (collection, id) in order {
            let final = finals[collection]![id]!
            // The version the server last gave, from wherever the entity was before this commit.
            var baseVersion: String?
            for address in final.touched where baseVersion == nil {
                baseVersion = try partition(address, verify: false).versions[id]
            }
            // The entity as this change was made on it: its committed state before this commit.
            var base: JSONValue?
            for address in final.touched where base == nil {
                base = try partition(address, verify: false).entities[id]
            }
            // An adopted hand edit: the entity as Folio last wrote it, whatever the partition holds now.
            if let prior = priors[collection]?[id] { (base, baseVersion) = prior }
            let operation: OutboxCommand.Operation = final.entity == nil ? .delete : .upsert
            if self.outbox.coalesces(collection) {
                let (removals, keepNothing) = try coalesce(outbox, collection: collection, id: id, operation: operation,
                                                           knownToServer: baseVersion != nil)
                result.append(contentsOf: removals.map { .remove(sequence: $0, archive: false) })
                if keepNothing { continue }
                // The replaced command never reaches the server: its base is this one's.
                if let first = removals.min(), case .pending(let replaced)? = outbox.commands[first] { base = replaced["base"] }
            }
            let command = OutboxCommand.make(
                sequence: sequence, writer: writer, operation: operation, collection: collection, entityID: id,
                partition: final.address.key.text, baseVersion: baseVersion, body: final.entity, base: base, timestamp: now)
            result.append(.enqueue(sequence: sequence, command: command))
            sequence += 1
        }
        for command in custom {
            result.append(.enqueue(sequence: sequence, command: OutboxCommand.make(
                sequence: sequence, writer: writer, operation: .custom(command.name), collection: command.collection,
                entityID: command.entityID, partition: nil, baseVersion: nil, body: command.payload, timestamp: now)))
            sequence += 1
        }
        return result
    }

    /// Which pending commands of this entity a new command replaces, and whether the new one
    /// must be dropped too (an entity created and deleted before the server saw it).
    /// - Parameter knownToServer: Whether the entity has a server version now: an earlier command
    ///   of it was acknowledged (its pending commands, made before that, carry no version).
    private func coalesce(_ outbox: OutboxState, collection: String, id: String,
                          operation: OutboxCommand.Operation, knownToServer: Bool) throws(FolioError) -> ([UInt64], Bool) {
        let mine = outbox.pending(collection: collection, id: id)
        // What any process may have sent, durably known: never coalesce that away.
        let sentThrough = try sentThrough()
        guard let last = mine.last, last.sequence > sentThrough,
              last.command["operation"]?.stringValue == "upsert" else { return ([], false) }
        if operation == .upsert { return ([last.sequence], false) }
        // A delete: if the entity has no server version and every pending command of it is an
        // unsent upsert made without one, the server never saw it, and nothing needs sending at
        // all. (A command acknowledged since leaves the queue: its version is what says so.)
        let neverSeen = !knownToServer && mine.allSatisfy { $0.sequence > sentThrough && $0.command["operation"]?.stringValue == "upsert"
            && $0.command["baseVersion"] == .null }
        if neverSeen { return (mine.map(\.sequence), true) }
        return ([last.sequence], false)
    }
}
