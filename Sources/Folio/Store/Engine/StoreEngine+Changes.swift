/// Change tracking: what each journal record and each outside edit changed, as ``ChangeSet``s.
///
/// Tracking is on only while someone observes the store (``Store/changes()``, a query
/// observation): then every partition a record touches is loaded before the record is applied,
/// so "inserted" and "updated" can be told apart, and a file changed on disk is diffed against
/// what this process last served.
extension StoreEngine {
    /// Observation begins: from now on, what records and reloads change is noted for delivery.
    func startTrackingChanges() { feed.start() }

    /// Observation ends: nothing more is noted, what partitions announced is forgotten, and the
    /// partitions observation kept in memory may leave it.
    func stopTrackingChanges() {
        feed.stop()
        partitions.trim()
    }

    /// A read ended: its changes were delivered, so what it learnt of another process's missed
    /// records is done with, and partitions it loaded beyond the budget may leave memory.
    func readEnded() {
        feed.clearMissedOtherProcessRecords()
        partitions.trim()
    }

    /// Notes what `record` changes. Call before applying it.
    /// - Parameter loadedNow: The partitions the records read with this one loaded from their
    ///   files, this one's loads added. A file loaded for an earlier record may already hold this
    ///   record's changes (its process is checkpointing them), so a change to such a partition is
    ///   news even where it looks like none.
    func noteChanges(of record: JournalRecord, origin: ChangeSet.Origin, loadedNow: inout Set<PartitionAddress>) {
        guard feed.isTracking else { return }
        var sets: [String: ChangeSet] = [:]
        func set(_ collection: String) -> ChangeSet {
            sets[collection] ?? ChangeSet(collection: collection, origin: origin)
        }
        // An entity may appear twice in a record: removed from one partition, set in another.
        var grouped: [String: [String: [JournalRecord.Change]]] = [:]
        for change in record.changes {
            grouped[change.address.collection, default: [:]][change.id, default: []].append(change)
        }
        for (collection, entities) in grouped {
            var changeSet = set(collection)
            for (id, changes) in entities {
                var existedBefore: Bool?
                var visible = false
                for change in changes {
                    changeSet.partitions.insert(change.address.key.text)
                    let (partition, loadedJustNow) = loadedForTracking(change.address)
                    if loadedJustNow { loadedNow.insert(change.address) }
                    let justLoaded = loadedNow.contains(change.address)
                    // What observers were told, where the partition fell back to an older file.
                    let told = feed.announcement(of: change.address)
                    let current = told != nil ? told?[id] : partition?.entities[id]
                    if change.entity == nil {
                        existedBefore = true
                        visible = true
                    } else if partition != nil {
                        if current != nil { existedBefore = true } else if existedBefore == nil { existedBefore = false }
                        // A file loaded for this batch may already hold the record: the process that
                        // wrote it may be checkpointing it (this read takes no lock before it
                        // reads the journal). Then the record looks like no change, but it is one.
                        if current != change.entity || justLoaded { visible = true }
                    } else {
                        existedBefore = existedBefore ?? (locator.locations(in: collection).map { $0.key(of: id) != nil })
                        visible = true
                    }
                }
                guard visible else { continue }
                let existsAfter = changes.contains { $0.entity != nil }
                if !existsAfter {
                    changeSet.deleted.insert(id)
                } else if existedBefore == false {
                    changeSet.inserted.insert(id)
                } else {
                    changeSet.updated.insert(id)
                }
            }
            sets[collection] = changeSet
        }
        for (collection, id, partition) in entitiesWithStatusChanges(record.outbox) {
            var changeSet = set(collection)
            changeSet.syncStatusChanged.insert(id)
            changeSet.partitions.insert(partition)
            sets[collection] = changeSet
        }
        for collection in sets.keys.sorted() { feed.record(sets[collection]!) }
    }

    /// The partition, loaded so its state before a record is known (nil if its file is
    /// unreadable), and whether it was loaded just now.
    private func loadedForTracking(_ address: PartitionAddress) -> (Partition?, justLoaded: Bool) {
        if let partition = partitions[address] { return (partition, false) }
        do {
            return (try partition(address, verify: false), true)
        } catch {
            report(.warning, "cannot tell what changed in this file: \(error.message)", path: address.path)
            return (nil, true)
        }
    }

    /// The entities whose commands these outbox changes queue, acknowledge, fail, retry or drop.
    private func entitiesWithStatusChanges(_ changes: [JournalRecord.OutboxChange]) -> [(collection: String, id: String, partition: String)] {
        var result: [(collection: String, id: String, partition: String)] = []
        for change in changes {
            var command: JSONValue?
            switch change {
            case .enqueue(_, let json): command = json
            default:
                do {
                    command = try outbox.command(change.sequence)
                } catch {
                    report(.warning, "cannot tell whose sync status changed: \(error.message)", path: OutboxBook.folder)
                }
            }
            if let collection = command?["collection"]?.stringValue, let id = command?["entityID"]?.stringValue {
                result.append((collection, id, command?["partition"]?.stringValue ?? ""))
            }
        }
        return result
    }

    /// Notes how a partition's served state changed when its file was read again.
    func noteReload(of partition: Partition, before: [String: JSONValue]) {
        guard feed.isTracking else { return }
        let origin = outsideOrigin(of: partition)
        var changeSet = ChangeSet(collection: partition.address.collection, partitions: [partition.address.key.text], origin: origin)
        for (id, json) in partition.entities where before[id] != json {
            if before[id] == nil { changeSet.inserted.insert(id) } else { changeSet.updated.insert(id) }
        }
        for id in before.keys where partition.entities[id] == nil { changeSet.deleted.insert(id) }
        feed.record(changeSet)
    }

    /// Who changed a partition's file, as its last read found it: another Folio process when the
    /// file holds a version Folio wrote (or an older one, Folio's newer state taken instead), a
    /// person when it holds anything else (a save to adopt, a
    /// merge with one, a file Folio never wrote). A file that is gone says nothing of who removed
    /// it: the journal decides (another process checkpointed records this one never read).
    ///
    /// Decided by the file, not by the journal alone: another process's checkpoint empties the
    /// journal before its files' events reach this process, so a read in between has already
    /// seen the new journal when the files are looked at.
    func outsideOrigin(of partition: Partition) -> ChangeSet.Origin {
        guard partition.fileHash != nil else { return feed.outsideOrigin }
        // A file that is an older revision Folio's state includes (a checkpoint replacing it as it
        // was read) adds nothing of its own: what changed came from Folio's writes.
        let isFolios =
            partition.unkeptFile == nil && (!partition.holdsMerge || partition.holdsNewerVersion) && !handEdits.waits(at: partition.address)
        return isFolios ? .otherProcess : .outsideEdit
    }

    /// What observers were told of each partition in memory: the state it announced last, or the
    /// one it serves, except for the entities of failed commits (`failed`), which observers never
    /// heard of. Taken before this state is replaced by one rebuilt from the disk.
    /// Where this process's failed commits are told apart (``neverDurable(past:)``), their
    /// entities are as observers were told, not unknown.
    func toldObservers(except failed: [String: Set<String>]) -> [PartitionAddress: (told: [String: JSONValue], unknown: Set<String>)] {
        var result: [PartitionAddress: (told: [String: JSONValue], unknown: Set<String>)] = [:]
        for partition in partitions.partitions where !partition.neverRead {
            let address = partition.address
            var told = feed.announcement(of: address) ?? partition.entities
            var unknown = failed[address.collection] ?? []
            if let before = feed.told(beforeFailureIn: address) {
                for id in before.ids { told[id] = before.values[id] }
                unknown.subtract(before.ids)
            }
            result[address] = (told, unknown)
        }
        return result
    }

    /// How many of the journal's records, as this state has taken them in, `other` (the state it
    /// replaces) took in too: the common start of both lists in one generation, none across
    /// generations. Records past it are other processes' commits `other` never read.
    func recordsAlsoTaken(by other: StoreEngine) -> Int {
        guard let header = cursor.header, header == other.cursor.header else { return 0 }
        let mine = cursor.records, theirs = other.cursor.records
        var count = 0
        while count < mine.count, count < theirs.count, mine[count] == theirs[count] { count += 1 }
        return count
    }

    /// What observers were told of the partitions that records past the first `known` ones change
    /// and that are not in `told` (the state replaced never held them: while observed, it holds
    /// every partition a record it read changed): each file with the records before. Taken after
    /// the journal was read, before the recovery's checkpoint, so that ``announceDifferences(from:)``
    /// announces those records too.
    func toldOfUnheldPartitions(
        pastRecords known: Int, told: [PartitionAddress: (told: [String: JSONValue], unknown: Set<String>)]
    ) -> [PartitionAddress: (told: [String: JSONValue], unknown: Set<String>)] {
        let records = cursor.records
        guard known < records.count else { return [:] }
        var result: [PartitionAddress: (told: [String: JSONValue], unknown: Set<String>)] = [:]
        for record in records[known...] {
            for change in record.changes where told[change.address] == nil && result[change.address] == nil {
                let address = change.address
                do {
                    result[address] = (committed(try partition(address).base, at: address, through: known), [])
                } catch {
                    report(.warning, "cannot tell what changed in this file while the store was rebuilt: \(error.message)", path: address.path)
                }
            }
        }
        return result
    }

    /// A journal sync failed: the records past `durableEnd` (this process's, appended while it
    /// held the writers' lock) never happened, though this state applied them. What observers
    /// were told of the entities they change is kept for the state rebuilt next: the partition's
    /// file with the records before them. Where that is not the told state (a partition whose
    /// file may still catch up), or the records cannot be told apart, they stay unknown.
    func neverDurable(past durableEnd: Int64) {
        guard feed.isTracking, let durable = cursor.recordCount(through: durableEnd), durable < cursor.records.count else { return }
        let records = cursor.records
        var failed: [PartitionAddress: Set<String>] = [:]
        for record in records[durable...] { for change in record.changes { failed[change.address, default: []].insert(change.id) } }
        for (address, ids) in failed {
            guard let partition = partitions.peek(address), feed.announcement(of: address) == nil, !partition.neverRead else { continue }
            feed.keepToldBeforeFailure(committed(partition.base, at: address, through: durable), ids: ids, in: address)
        }
    }

    /// A partition's file content (`base`) with the changes of the first `count` records taken in:
    /// its committed state as of those records.
    private func committed(_ base: [String: JSONValue], at address: PartitionAddress, through count: Int) -> [String: JSONValue] {
        var entities = base
        for record in cursor.records[..<count] {
            for change in record.changes where change.address == address { entities[change.id] = change.entity }
        }
        return entities
    }

    /// A state rebuilt from the disk takes over what observers were told by the state it
    /// replaces: each partition they knew is read again, and what differs (another process's
    /// commits the old state had not read) is announced; the entities of failed commits are
    /// taken as they are now.
    func announceDifferences(from told: [PartitionAddress: (told: [String: JSONValue], unknown: Set<String>)]) {
        for (address, known) in told.sorted(by: { $0.key < $1.key }) {
            do {
                let partition = try partition(address)
                var before = known.told
                for id in known.unknown { before[id] = partition.entities[id] }
                noteReload(of: partition, before: before)
            } catch {
                report(.warning, "cannot tell what changed in this file while the store was rebuilt: \(error.message)", path: address.path)
            }
        }
    }
}
