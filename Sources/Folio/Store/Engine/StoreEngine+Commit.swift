/// Committing a transaction: one record appended to the journal.
extension StoreEngine {
    /// Turns a transaction's staged changes into a journal record, appends it and applies it.
    ///
    /// Must run with the writers' lock held and the journal refreshed. The record is written but
    /// not synced: the caller syncs it (default durability) or lets the next checkpoint do it.
    /// - Returns: The journal offset the record ends at, or nil if the transaction changed nothing.
    /// - Throws: If the append fails, after cutting the journal back so the transaction leaves no
    ///   trace; if even that fails, a ``FolioError`` and the caller must reload from disk.
    func commit(_ transaction: Transaction) throws(FolioError) -> Int64? {
        // A person's saves read so far are adopted in this same record (StoreEngine+HandEdits.swift),
        // after the app's hook staged what it derives from them.
        let adoption = takeAdoption()
        if !adoption.isEmpty, let hook = settings.onOutsideEdit {
            do {
                try hook(adoption.changeSets, transaction)
            } catch {
                report(.error, "the app's onOutsideEdit hook failed (\(error)); the edit is adopted without it", path: nil)
            }
        }
        let adopted = Set(adoption.order.map { $0.collection + "/" + $0.id })
        var changes: [JournalRecord.Change] = adoption.changes
        for address in Set(transaction.staged.keys).union(transaction.versionOnly.keys).sortedByPath() {
            let partition = try partition(address, verify: false)
            let staged = transaction.staged[address] ?? [:]
            let versions = transaction.stagedVersions[address] ?? [:]
            for id in staged.keys.sorted(by: { $0.precedesInKeyOrder($1) }) {
                // No pull reverts an edit not yet pushed: the server's state waits for its command.
                if transaction.isFromServer && adopted.contains(address.collection + "/" + id) { continue }
                let entity = staged[id]!
                var version = entity == nil ? nil : versions[id]
                if !transaction.isFromServer {
                    // Local changes keep what the server has: a moved entity takes its version
                    // along; a deleted one leaves it behind as a tombstone version.
                    if entity != nil, partition.versions[id] == nil {
                        version = try transaction.versionMoving(id, collection: address.collection, into: address)
                    } else if entity == nil, transaction.deletes(id, collection: address.collection) {
                        version = partition.versions[id]
                    }
                }
                guard partition.entities[id] != entity || (version != nil && partition.versions[id] != version) else { continue }
                changes.append(JournalRecord.Change(address: address, id: id, entity: entity, version: version))
            }
            for (id, version) in (transaction.versionOnly[address] ?? [:]).sorted(by: { $0.key.precedesInKeyOrder($1.key) })
            where staged[id] == nil {
                guard partition.versions[id] != version else { continue }
                changes.append(
                    JournalRecord.Change(
                        address: address, id: id, entity: partition.entities[id], version: version,
                        forgetsVersion: version == nil))
            }
        }
        try ensureJournalHeader()
        var commands = transaction.outboxChanges
        // An entity's committed state before this commit, and the version the server last gave it.
        func committed(_ address: PartitionAddress, _ id: String) throws(FolioError) -> (entity: JSONValue?, version: String?) {
            let partition = try partition(address, verify: false)
            return (partition.entities[id], partition.versions[id])
        }
        if !transaction.isFromServer {
            commands += try outbox.changes(
                for: changes, order: adoption.order + transaction.stagingOrder, custom: transaction.customCommands,
                priors: adoption.priors, writer: commandIDPrefix, committed: committed)
        } else if !adoption.isEmpty {
            commands += try outbox.changes(
                for: adoption.changes, order: adoption.order, custom: [], priors: adoption.priors,
                writer: commandIDPrefix, committed: committed)
        }
        let origin: ChangeSet.Origin = transaction.isFromServer ? .sync : (adoption.isEmpty || transaction.hasStaged ? .thisProcess : .outsideEdit)
        return try append(JournalRecord(transaction: cursor.nextTransaction, changes: changes, outbox: commands), origin: origin)
    }

    /// Appends a record (unless it changes nothing) and applies it; see ``commit(_:)``.
    func append(_ record: JournalRecord, origin: ChangeSet.Origin = .thisProcess) throws(FolioError) -> Int64? {
        guard !record.changes.isEmpty || !record.outbox.isEmpty else { return nil }
        try ensureJournalHeader()
        let end = try cursor.append(record)
        apply(record, origin: origin)
        cursor.advance(to: end)
        return end
    }
}
