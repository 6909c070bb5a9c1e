/// Reading partitions: lazily, verified against the file's identity on every access, so an edit
/// made outside this process (another process's checkpoint, rsync, a text editor) is picked up.
extension StoreEngine {
    /// Registers an entity type's collection, refusing a second type that disagrees on its layout.
    @discardableResult
    func register<E: Entity>(_ type: E.Type) throws(FolioError) -> PartitionGranularity {
        let name = E.collection
        let granularity = E.partitioning.granularity
        if let known = collections[name] {
            guard known == granularity else {
                throw FolioError(.collectionMismatch, "collection \(name) is partitioned by \(known), but \(E.self) declares \(granularity)")
            }
            return granularity
        }
        try Names.validateCollection(name)
        let file = try fileSystem.identity(name + ".json")
        let folder = try fileSystem.identity(name)
        if granularity == .none, folder?.isDirectory == true {
            throw FolioError(
                .collectionMismatch, "\(E.self) declares collection \(name) unpartitioned, but the store has a partitioned folder \(name)/", path: name)
        }
        if granularity != .none, file != nil {
            throw FolioError(
                .collectionMismatch,
                "\(E.self) declares collection \(name) partitioned by \(granularity), but the store has the unpartitioned file \(name).json",
                path: name + ".json")
        }
        noteRegistered(name, granularity: granularity, syncMode: E.syncMode)
        return granularity
    }

    /// The partition, loaded if needed; with `verify`, reloaded if its file changed on disk.
    ///
    /// A file that does not parse and was never read whole by this process throws on reads
    /// (`verify`); writes (`verify: false`) get a placeholder holding only the journal's changes, so
    /// a change to a broken partition waits in the journal (FORMAT.md, "Editing by hand").
    func partition(_ address: PartitionAddress, verify: Bool = true) throws(FolioError) -> Partition {
        if let cached = partitions[address] {
            guard verify else { return cached }
            let identity = try fileSystem.identity(address.path)
            if identity == cached.identity || (cached.unreadable != nil && identity == cached.unreadableIdentity) {
                if let announced = feed.takeAnnouncement(of: address) { noteReload(of: cached, before: announced) }
            } else {
                try reload(cached)
                partitions.recharge(cached)
            }
            if cached.neverRead, let problem = cached.unreadable { throw problem }
            return cached
        }
        return try firstLoad(address, from: try FetchedFile.fetch(address.path, fileSystem: fileSystem), verify: verify)
    }

    /// Caches a partition not in memory, from its file as just read (nil: there is none).
    func firstLoad(_ address: PartitionAddress, from file: FetchedFile?, verify: Bool = true) throws(FolioError) -> Partition {
        let partition: Partition
        noteFileLoad()
        // What this process served before the partition left memory, if it can be had again.
        let departed = partitions.departed[address]
        if let file {
            let (bytes, identity) = (file.bytes, file.identity)
            let contents: PartitionFile.Contents
            do {
                contents = try file.contents.get()
            } catch {
                if let hash = departed, let lastGood = history.keptState(hash, of: address.path) {
                    report(.error, "\(error.description); serving the last good state and leaving the file untouched", path: address.path)
                    let served = Partition(address: address, identity: nil, contents: lastGood)
                    served.noteRead(fileHash: hash, holdsMerge: false, unkeptFile: nil)
                    served.markUnreadable(error, identity: identity)
                    applyRecords(to: served)
                    partitions.insert(served)
                    return served
                }
                report(.error, "\(error.description); changes to it wait in the journal until it is fixed", path: address.path)
                let placeholder = Partition.empty(address)
                placeholder.markUnreadable(error, identity: identity, neverRead: true)
                applyRecords(to: placeholder)
                partitions.insert(placeholder)
                if verify { throw error }
                return placeholder
            }
            // The common case, Folio's own newest version, needs no reconciling.
            let reconciled =
                file.isNewestKept
                ? VersionHistory.Reconciled(contents: contents, merged: false, kept: true, hash: file.hash)
                : history.reconcile(contents, bytes: bytes, path: address.path)
            partition = Partition(address: address, identity: identity, contents: reconciled.contents)
            noteFile(bytes, of: partition, reconciled)
            if feed.isTracking, let hash = departed, hash != partition.fileHash, let before = history.keptState(hash, of: address.path) {
                noteReload(of: partition, before: before.entities)
            }
        } else {
            partition = Partition(address: address, identity: nil, contents: history.absentFileContents(at: address.path))
        }
        applyRecords(to: partition)
        partitions.insert(partition)
        locator.noteLoaded(partition, previousIDs: [])
        return partition
    }

    private func applyRecords(to partition: Partition) {
        guard touched.contains(partition.address) else { return }
        for change in journalChanges(at: partition.address) { partition.apply(change) }
    }

    /// The file changed outside this process: read it again, keep the journal's changes on top.
    /// If it no longer parses, keep serving the last good state and report it once.
    func reload(_ partition: Partition) throws(FolioError) {
        let path = partition.address.path
        let previousIDs = Set(partition.entities.keys)
        let before = feed.announcement(of: partition.address) ?? partition.entities
        noteFileLoad()
        // A file caught in the middle of a person's save is read again (SettledRead).
        if let file = try FetchedFile.fetch(path, fileSystem: fileSystem) {
            let (bytes, identity) = (file.bytes, file.identity)
            do {
                let reconciled = history.reconcile(try file.contents.get(), bytes: bytes, path: path)
                // The file as last read: what a person saving over it saw of the journal's
                // changes (an earlier save of theirs, adopted, or Folio's version).
                let replaced = partition.base
                partition.load(reconciled.contents, identity: identity)
                noteFile(bytes, of: partition, reconciled, replacing: replaced)
            } catch {
                if partition.unreadableIdentity != identity {
                    report(.error, "\(error.description); serving the last good state and leaving the file untouched", path: path)
                }
                partition.markUnreadable(error, identity: identity)
                return
            }
        } else {
            partition.load(history.absentFileContents(at: path), identity: nil)
            noteFile(nil, of: partition, nil)
        }
        partition.markReadable()
        applyRecords(to: partition)
        locator.noteLoaded(partition, previousIDs: previousIDs)
        _ = feed.takeAnnouncement(of: partition.address)
        noteReload(of: partition, before: before)
    }

    /// The addresses a selection covers, in path order: files on disk plus partitions that exist
    /// so far only in the journal.
    func addresses(collection: String, granularity: PartitionGranularity, selection: PartitionSelection) throws(FolioError) -> [PartitionAddress] {
        func address(_ key: PartitionKey) -> PartitionAddress {
            PartitionAddress(collection: collection, granularity: granularity, key: key)
        }
        if granularity == .none {
            guard selection == .all else {
                throw FolioError(.invalidQuery, "collection \(collection) is not partitioned; query it with .all")
            }
            return [address(.whole)]
        }
        // The range of keys selected, as text bounds (keys compare as text).
        let low: String, high: String
        switch selection {
        case .all:
            low = ""; high = "~"
        case .day(let day):
            guard granularity == .day else { throw FolioError(.invalidQuery, "collection \(collection) is partitioned by month; select months") }
            return [address(try PartitionKey.validDay(day))]
        case .days(let from, let through):
            guard granularity == .day else { throw FolioError(.invalidQuery, "collection \(collection) is partitioned by month; select months") }
            low = try PartitionKey.validDay(from).text
            high = try PartitionKey.validDay(through).text
        case .month(let month):
            let key = try PartitionKey.validMonth(month)
            if granularity == .month { return [address(key)] }
            low = key.text + "-01"; high = key.text + "-31"
        case .months(let from, let through):
            low = try PartitionKey.validMonth(from).text
            high = try PartitionKey.validMonth(through).text + (granularity == .day ? "-31" : "")
        }
        // Each file name gives one key, and a day file counts only in its own month's folder:
        // no key is found twice, so the keys are gathered in a list, each folder's sorted.
        var keys: [PartitionKey] = []
        let lowMonth = String(low.prefix(7)), highMonth = String(high.prefix(7))
        let entries = try fileSystem.list(collection).sorted { $0.name < $1.name }
        if granularity == .month {
            for entry in entries where !entry.isDirectory {
                guard let key = DataFileName.month(fileName: entry.name), key.text >= low, key.text <= high else { continue }
                keys.append(key)
            }
        } else {
            let months = entries.filter { entry in
                entry.isDirectory && DataFileName.isMonthFolder(entry.name) && entry.name >= lowMonth && entry.name <= highMonth
            }.map(\.name)
            // Years of month folders are listed on the scan's threads (a listing is a system call
            // that sorts the folder's entries); a few are listed here, cheaper than waking threads.
            let fileSystem = self.fileSystem
            let list = { @Sendable (month: String) in Result { () throws(FolioError) in try fileSystem.list(collection + "/" + month) } }
            let listed = months.count < 4 ? months.map(list) : parallelMap(months, width: Self.scanWidth, list)
            for (month, files) in zip(months, listed) {
                let first = keys.count
                for file in try files.get() where !file.isDirectory {
                    guard let key = DataFileName.day(fileName: file.name, inMonthFolder: month), key.text >= low, key.text <= high else { continue }
                    keys.append(key)
                }
                keys[first...].sort()
            }
        }
        let pending = touched.filter { $0.collection == collection && $0.key.text >= low && $0.key.text <= high }.map(\.key)
        if !pending.isEmpty { keys = Array(Set(keys + pending)).sorted() }
        return keys.map(address)
    }

    /// Where the entity with this id lives now, or nil if nowhere (``IdLocator/locate(collection:granularity:id:strict:)``,
    /// lenient: a file that cannot be read is skipped).
    func locate(collection: String, granularity: PartitionGranularity, id: String, verifyingAbsence: Bool = false) throws(FolioError) -> PartitionAddress? {
        try locator.locate(collection: collection, granularity: granularity, id: id, verifyingAbsence: verifyingAbsence)
    }

    /// The partition files the id locator could not read, with why.
    var filesNotIndexed: [PartitionAddress: FolioError] { locator.unreadableFiles }

    /// Notes the bytes of the file a partition was just loaded from (nil: no file).
    func noteFile(_ bytes: [UInt8]?, of partition: Partition, _ reconciled: VersionHistory.Reconciled?, replacing replaced: [String: JSONValue]? = nil) {
        partition.noteRead(
            fileHash: reconciled?.hash ?? bytes.map(ContentHash.init), holdsMerge: reconciled?.merged == true,
            newerVersion: reconciled?.newerVersion == true,
            unkeptFile: reconciled?.kept == false ? bytes : nil)
        noteEdit(partition.address, reconciled, replacing: replaced)
    }
}
