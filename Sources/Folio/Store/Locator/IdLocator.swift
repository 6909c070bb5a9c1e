/// Where each id of the store lives: the id locator. It owns the id index (``IdIndex``, private
/// here), the ids found in two files (IdLocator+Duplicates.swift) and the saved id index
/// (`.folio/index/`, IdLocator+IndexFile.swift).
///
/// It reads no partition itself: it asks the engine through ``PartitionSource``, and the engine
/// tells it what happened to the partitions (a record applied, a file loaded or reloaded, a
/// partition evicted, a generation the process did not read). Guarded as the engine is: only
/// the ``Store`` actor calls it.
final class IdLocator {
    let idIndex = IdIndex()
    let fileSystem: FileSystem
    private let log: LogHandler?
    unowned let source: any PartitionSource

    init(source: any PartitionSource, fileSystem: FileSystem, log: LogHandler?) {
        (self.source, self.fileSystem, self.log) = (source, fileSystem, log)
    }

    func report(_ level: LogMessage.Level, _ text: String, path: String? = nil) {
        log?(LogMessage(level: level, text: text, path: path))
    }

    /// The partition at `address`, as a read verifies it.
    func partition(_ address: PartitionAddress) throws(FolioError) -> Partition {
        try source.partition(address, verify: true)
    }

    // MARK: What the index knows

    /// Whether the collection's index is built.
    func isBuilt(_ collection: String) -> Bool { idIndex.isBuilt(collection) }
    /// Where a built collection's ids are now (nil if not built), as a value later changes leave as it is.
    func locations(in collection: String) -> IdIndex.Locations? { idIndex.locations(in: collection) }
    /// The ids the partition at `address` holds, as far as a built index knows (nil if not built).
    func ids(at address: PartitionAddress) -> [String]? { idIndex.ids(at: address.key, in: address.collection) }
    /// Every partition file the index could not read, with why.
    var unreadableFiles: [PartitionAddress: FolioError] { idIndex.allUnreadableFiles }

    // MARK: Following the partitions

    /// A journal record's change of `id` at `address` (set there, or removed from there).
    func apply(_ id: String, at address: PartitionAddress, exists: Bool) {
        idIndex.apply(id, at: address, exists: exists)
    }

    /// Records this process never read are now in files it may not have loaded: where ids live
    /// is built again on demand.
    func forgetLocations() { idIndex.forgetLocations() }

    /// A partition was loaded or read again from its file; `previousIDs` are the ids it held before.
    func noteLoaded(_ partition: Partition, previousIDs: Set<String>) {
        let address = partition.address
        guard address.granularity != .none, idIndex.isBuilt(address.collection) else { return }
        // Saved again only when it changed: a reader that loads files the index already describes
        // must not rewrite years of ids when it closes.
        var changed = partition.identity != idIndex.identity(of: address.key, in: address.collection)
        for id in previousIDs where partition.entities[id] == nil {
            forgetCopy(of: id, in: address)
            idIndex.remove(id, from: address)
            changed = true
        }
        for id in partition.entities.keys {
            if idIndex.key(of: id, in: address.collection) != address.key { changed = true }
            index(id, in: address)
        }
        if changed { idIndex.markChanged(address.collection) }
    }

    /// A partition left memory: the index keeps the identity of the file its ids were read from,
    /// so it can still be saved without reading the file again.
    func noteEvicted(_ partition: Partition) {
        let address = partition.address
        guard address.granularity != .none, idIndex.isBuilt(address.collection), let identity = partition.identity else { return }
        idIndex.remember(identity, of: address.key, in: address.collection)
    }

    // MARK: Finding an id

    /// Where the entity with this id lives now, or nil if nowhere.
    ///
    /// Partition files that cannot be read are skipped, so one broken file does not stop the rest
    /// of the collection. With `strict`, an id not found while such a file exists is an error
    /// (the entity may be in it); writes use the lenient form so other days keep working.
    ///
    /// With `verifyingAbsence`, an id the index places nowhere is believed absent only after the
    /// files that arrived or changed since the index learnt them are read (``catchUp(_:granularity:)``):
    /// a `get` or a `delete` in a process that is open while a git pull, rsync or a person's save
    /// brings the id in. Without it (an insert), a copy brought in unseen is found when its
    /// file is next read, and refused as an id in two files, never overwritten.
    func locate(
        collection: String, granularity: PartitionGranularity, id: String, strict: Bool = false,
        verifyingAbsence: Bool = false
    ) throws(FolioError) -> PartitionAddress? {
        if granularity == .none {
            let address = PartitionAddress(collection: collection, granularity: .none, key: .whole)
            return try partition(address).entities[id] == nil ? nil : address
        }
        // A build reads every file that changed since the saved index: nothing to catch up then.
        var caughtUp = false
        if !idIndex.isBuilt(collection) {
            // Finding the id loads files (the look-up below `stat`s every file of the collection,
            // then reads one), which makes a read run again under the shared lock (Store.read):
            // done there once, not twice.
            if source.putOffFileLoadIfLockFree() { return nil }
            // A process that has not built the index yet (a cold `get`, a widget adding one todo)
            // asks the saved index first: it answers when nothing changed since it was saved.
            // Partitions in memory must be their files (a read's second, locked pass finds the
            // one its first pass loaded).
            if source.memoryIsFiles(in: collection) {
                let files = try source.addresses(collection: collection, granularity: granularity, selection: .all)
                let answer: IndexFile.LookUp
                do {
                    answer = try IndexFile.lookUp(fileSystem, collection: collection, id: id, files: files)
                } catch  where error.path == IndexFile.path(collection) {
                    // The saved index cannot be read: the build below reads it again, reports
                    // that, and reads the files instead (derived data never fails a read).
                    answer = .unknown
                }
                switch answer {
                case .absent:
                    return nil
                case .at(let key):
                    let address = PartitionAddress(collection: collection, granularity: granularity, key: key)
                    if try partition(address).entities[id] != nil { return address }
                case .unless(let toRead, let found):
                    // The files the index does not describe as they are, read; one that cannot be
                    // read leaves the answer to the build, which reports it as a read would.
                    if let holders = holders(of: id, in: toRead, besides: found, collection: collection, granularity: granularity) {
                        if holders.isEmpty { return nil }
                        if holders.count == 1, try partition(holders[0]).entities[id] != nil { return holders[0] }
                    }
                case .unknown:
                    break
                }
            }
            try buildIndex(collection: collection, granularity: granularity)
            caughtUp = true
        } else if verifyingAbsence, idIndex.key(of: id, in: collection) == nil {
            try catchUp(collection, granularity: granularity)
            caughtUp = true
        }
        // Twice at most: a second time after catching up with files that changed unseen, when the
        // file the index names no longer holds the id.
        while true {
            if idIndex.key(of: id, in: collection) == nil, case let broken = idIndex.unreadableFiles(in: collection), !broken.isEmpty {
                // Files that were broken may have been fixed since.
                for address in broken.keys.sorted() { indexPartition(address) }
                // An id known in several files (its place unset) exists: the duplicate error below says where.
                if strict, idIndex.key(of: id, in: collection) == nil, idIndex.copies(of: id, in: collection) == nil,
                    let problem = idIndex.unreadableFiles(in: collection).values.first
                {
                    throw FolioError(
                        .corruptFile, "cannot tell whether \"\(id)\" exists: \(problem.message)",
                        path: problem.path, line: problem.line, column: problem.column, entityID: id)
                }
            }
            try refuseDuplicate(collection: collection, granularity: granularity, id: id)
            if let key = idIndex.key(of: id, in: collection) {
                let address = PartitionAddress(collection: collection, granularity: granularity, key: key)
                // Verify: the file may have changed since the index learnt the id.
                if try partition(address).entities[id] != nil { return address }
            }
            guard verifyingAbsence, !caughtUp else { return nil }
            try catchUp(collection, granularity: granularity)
            caughtUp = true
        }
    }

    /// The partitions that hold `id`: `found` (from the saved index) and those of `toRead` that
    /// hold it once read; nil when one of these cannot be read.
    private func holders(
        of id: String, in toRead: [PartitionAddress], besides found: [PartitionKey], collection: String, granularity: PartitionGranularity
    ) -> [PartitionAddress]? {
        var holders = found.map { PartitionAddress(collection: collection, granularity: granularity, key: $0) }
        for address in toRead {
            do {
                if try partition(address).entities[id] != nil { holders.append(address) }
            } catch {
                return nil
            }
        }
        return holders
    }

    /// Reads again every file of a collection that is not the one the index learnt its ids from
    /// (new, replaced or edited since; a file known unreadable is tried again): one listing and one
    /// `stat` per file, and a read of each that changed.
    func catchUp(_ collection: String, granularity: PartitionGranularity) throws(FolioError) {
        for address in try source.addresses(collection: collection, granularity: granularity, selection: .all) {
            let known = source.identityInMemory(of: address) ?? idIndex.identity(of: address.key, in: collection)
            // Unchanged, or (both nil) a partition only in the journal: nothing to read.
            if try fileSystem.identity(address.path) == known { continue }
            indexPartition(address)
        }
    }

    /// Reads the partition at `address` and records where its ids live (or that it cannot be read).
    func indexPartition(_ address: PartitionAddress) {
        do {
            let partition = try partition(address)
            idIndex.noteReadable(address)
            for id in partition.entities.keys { index(id, in: address) }
        } catch {
            if idIndex.noteUnreadable(address, error) {
                report(.error, "\(error.message); its entities cannot be found by id until it is fixed", path: error.path)
            }
        }
    }
}
