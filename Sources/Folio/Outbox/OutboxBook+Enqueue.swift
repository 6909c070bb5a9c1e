internal import Foundation

/// The commands a commit enqueues: one per entity of a push collection that changed (its final
/// state), coalesced where the collection asks for it, and the transaction's own.
extension OutboxBook {
    /// The outbox changes for a transaction's entity changes: one command per entity of a push
    /// collection that changed (its final state), coalesced where the collection asks for it,
    /// plus the transaction's custom commands.
    /// - Parameters:
    ///   - staging: The order in which the transaction touched its entities; commands follow it.
    ///   - custom: The transaction's app-defined commands, queued after the entities' ones.
    ///   - priors: For adopted hand edits, each entity as Folio last wrote it.
    ///   - writer: The prefix of the new commands' idempotency keys.
    ///   - committed: An entity's committed state before this commit, and the version the server
    ///     last gave it, in one partition.
    /// - Returns: The outbox changes to commit with the transaction's record.
    func changes(
        for changes: [JournalRecord.Change], order staging: [(collection: String, id: String)],
        custom: [Transaction.CustomCommand],
        priors: [String: [String: (entity: JSONValue?, version: String?)]] = [:],
        writer: String,
        committed: (PartitionAddress, String) throws(FolioError) -> (entity: JSONValue?, version: String?)
    ) throws(FolioError) -> [JournalRecord.OutboxChange] {
        struct Final { var address: PartitionAddress; var entity: JSONValue?; var touched: [PartitionAddress] }
        var finals: [String: [String: Final]] = [:]
        for change in changes where queue.pushes(change.address.collection) {
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
        var sequence = try nextSequence()
        var result: [JournalRecord.OutboxChange] = []
        let now = Date()
        for (collection, id) in order {
            let final = finals[collection]![id]!
            // The version the server last gave, and the entity as this change was made on it: its
            // committed state before this commit, from wherever it was.
            var baseVersion: String?, base: JSONValue?
            for address in final.touched where baseVersion == nil || base == nil {
                let before = try committed(address, id)
                baseVersion = baseVersion ?? before.version
                base = base ?? before.entity
            }
            // An adopted hand edit: the entity as Folio last wrote it, whatever the partition holds now.
            if let prior = priors[collection]?[id] { (base, baseVersion) = prior }
            let operation: OutboxCommand.Operation = final.entity == nil ? .delete : .upsert
            if queue.coalesces(collection) {
                let mine = try pending(collection: collection, id: id)
                let (removals, keepNothing) = try coalesce(mine, operation: operation, knownToServer: baseVersion != nil)
                result.append(contentsOf: removals.map { .remove(sequence: $0, archive: false) })
                if keepNothing { continue }
                // The replaced command never reaches the server: its base is this one's.
                if let first = removals.min(), let replaced = mine.first(where: { $0.sequence == first }) { base = replaced.command["base"] }
            }
            let command = OutboxCommand.make(
                sequence: sequence, writer: writer, operation: operation, collection: collection, entityID: id,
                partition: final.address.key.text, baseVersion: baseVersion, body: final.entity, base: base, timestamp: now)
            result.append(.enqueue(sequence: sequence, command: command))
            sequence += 1
        }
        for command in custom {
            let json = OutboxCommand.make(
                sequence: sequence, writer: writer, operation: .custom(command.name), collection: command.collection,
                entityID: command.entityID, partition: nil, baseVersion: nil, body: command.payload, timestamp: now)
            result.append(.enqueue(sequence: sequence, command: json))
            sequence += 1
        }
        return result
    }

    /// Which pending commands of this entity a new command replaces, and whether the new one
    /// must be dropped too (an entity created and deleted before the server saw it).
    /// - Parameter knownToServer: Whether the entity has a server version now: an earlier command
    ///   of it was acknowledged (its pending commands, made before that, carry no version).
    /// - Parameter mine: The entity's pending commands, in order.
    private func coalesce(
        _ mine: [(sequence: UInt64, command: JSONValue)],
        operation: OutboxCommand.Operation, knownToServer: Bool
    ) throws(FolioError) -> ([UInt64], Bool) {
        // What any process may have sent, durably known: never coalesce that away.
        let sentThrough = try sentThrough()
        guard let last = mine.last, last.sequence > sentThrough,
            last.command["operation"]?.stringValue == "upsert"
        else { return ([], false) }
        if operation == .upsert { return ([last.sequence], false) }
        // A delete: if the entity has no server version and every pending command of it is an
        // unsent upsert made without one, the server never saw it, and nothing needs sending at
        // all. (A command acknowledged since leaves the queue: its version is what says so.)
        let neverSeen =
            !knownToServer
            && mine.allSatisfy {
                $0.sequence > sentThrough && $0.command["operation"]?.stringValue == "upsert"
                    && $0.command["baseVersion"] == .null
            }
        if neverSeen { return (mine.map(\.sequence), true) }
        return ([last.sequence], false)
    }
}
