/// Hand edits as changes like any other (FORMAT.md, "Editing by hand"): a person's save that
/// Folio reads is adopted in a journal record that makes it the partition's committed state and,
/// for push collections, enqueues its commands, in one transaction.
extension StoreEngine {
    /// What adopting the pending edits adds to a transaction's record.
    struct Adoption {
        var changes: [JournalRecord.Change] = []
        /// The entities' state before the edit, per collection and id: the commands' bases.
        var priors: [String: [String: (entity: JSONValue?, version: String?)]] = [:]
        var order: [(collection: String, id: String)] = []
        var changeSets: [ChangeSet] = []
        var isEmpty: Bool { changes.isEmpty }
    }

    /// Notes (or forgets) the edit a partition load found.
    func noteEdit(_ address: PartitionAddress, _ reconciled: VersionHistory.Reconciled?, replacing replaced: [String: JSONValue]?) {
        if let reconciled, let folio = reconciled.folio {
            handEdits.note(HandEdit(folio: folio, saved: reconciled.contents, replaced: replaced), at: address)
        } else {
            handEdits.note(nil, at: address)
        }
    }

    /// Whether an edit of a registered collection waits to be adopted.
    var hasAdoptableEdits: Bool {
        !isReadOnly && handEdits.hasPending { outbox.syncModes[$0] != nil }
    }

    /// Takes the pending edits of registered collections and turns them into journal changes.
    ///
    /// An entity that a record of the current journal generation touched is not taken from the
    /// save: the journal's state is served on top of the file (an earlier adoption of this same
    /// save is such a record, which makes adopting exactly once). Unless the file held that
    /// state when the person saved over it (Folio's version, or the file as this process last
    /// read it): they saved twice, the first save was adopted, and they changed the entity again.
    func takeAdoption() -> Adoption {
        var adoption = Adoption()
        guard !isReadOnly else { return adoption }
        for address in handEdits.pendingAddresses(where: { outbox.syncModes[$0] != nil }) {
            guard let edit = handEdits.takePending(at: address) else { continue }
            // The save becomes Folio's version at the next checkpoint even when the journal leaves
            // it as it is: otherwise the file stays a save, and every later read of it (a reopen,
            // or a reload after the partition left memory) would adopt it again.
            partitions.peek(address)?.markAdoptedSave()
            let journalTouched = Set(journalChanges(at: address).map(\.id))
            let collection = address.collection
            var changeSet = ChangeSet(collection: collection, partitions: [address.key.text], origin: .outsideEdit)
            let ids = Set(edit.folio.entities.keys).union(edit.saved.entities.keys).sorted { $0.precedesInKeyOrder($1) }
            for id in ids {
                let before = edit.folio.entities[id], after = edit.saved.entities[id]
                guard before != after else { continue }
                var prior = (entity: before, version: edit.folio.versions[id])
                if journalTouched.contains(id) {
                    let served = partitions.peek(address)
                    let current = served?.entities[id]
                    guard current != after else { continue }
                    guard before == current || edit.replaced?[id] == current else {
                        report(.info, "\(id): a change committed since the file was written is served over the edit of it", path: address.path)
                        continue
                    }
                    prior = (current, served?.versions[id])
                }
                let version = after == nil ? prior.version : (edit.saved.versions[id] ?? prior.version)
                adoption.changes.append(JournalRecord.Change(address: address, id: id, entity: after, version: version))
                adoption.priors[collection, default: [:]][id] = prior
                adoption.order.append((collection, id))
                if after == nil { changeSet.deleted.insert(id) } else if before == nil { changeSet.inserted.insert(id) } else { changeSet.updated.insert(id) }
            }
            if !changeSet.ids.isEmpty { adoption.changeSets.append(changeSet) }
        }
        return adoption
    }

    /// Adopts the pending edits in a record of their own, from inside a checkpoint, and syncs the
    /// journal before the checkpoint writes the file as Folio's version.
    func adoptEditsDuringCheckpoint() throws(FolioError) {
        guard hasAdoptableEdits else { return }
        if try commit(Transaction(engine: self)) != nil { try journal.sync() }
    }

    /// Keeps an adopted save that is exactly the partition's committed state (not merged with
    /// Folio's, no other change pending) as Folio's newest version of its file, durably, as soon
    /// as its adoption is: a later save made from it is then merged against what Folio now serves, and
    /// no process adopts it again. (Otherwise Folio's version stays the one before the save
    /// until the next checkpoint, and a second save of an entity the first one changed would
    /// read as made against a change committed since: served under the journal's state, lost.)
    /// A file saved again since is left alone: it is a new edit. A failure is reported, not
    /// thrown: the adoption stands, and the next checkpoint keeps the save as it always did.
    func keepAdoptedSaveAsFolios(_ partition: Partition) {
        let path = partition.address.path
        do {
            guard !isReadOnly, let (bytes, _) = try fileSystem.read(path), ContentHash(bytes) == partition.fileHash else { return }
            let barrier = DurabilityBarrier(fileSystem: fileSystem, kind: .perFile)
            try history.keepAsFolios(bytes, of: path, revision: partition.revision, barrier: barrier)
            try barrier.flush()
        } catch {
            report(
                .warning,
                "cannot keep the adopted save as Folio's version yet (\(error.message)); a save of an entity it changed made before the next checkpoint is served under it",
                path: path)
        }
    }

    /// Keeps the bytes of an adopted save that the checkpoint leaves in place (the journal's state
    /// equals it) as Folio's newest version, durably, before the journal forgets the adoption:
    /// later reads then take the file as Folio's, not as a save to adopt again. A file saved again
    /// since is left alone (it is a new edit). Durable once the checkpoint's `barrier` is flushed
    /// (before the journal is reset).
    func keepAdoptedSave(_ partition: Partition, barrier: DurabilityBarrier, run: CheckpointRun) throws(FolioError) {
        let path = partition.address.path
        guard let (bytes, _) = try fileSystem.read(path), ContentHash(bytes) == partition.fileHash, !isReadOnly else { return }
        // As for a file the checkpoint writes: it holds every record so far (`.folio/written`).
        try run.noteWrite(path, ContentHash(bytes))
        try history.keepAsFolios(bytes, of: path, revision: partition.revision, barrier: barrier)
        partition.markSaveKept()
    }
}
