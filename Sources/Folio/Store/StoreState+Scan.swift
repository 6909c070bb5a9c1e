internal import Foundation

/// Reading many partitions for one query: the files not in memory are read, parsed and decoded in
/// parallel, a batch at a time, then taken in one by one in order, through the partition cache
/// and its budget, so a query over years of data neither waits on one core nor keeps every file.
extension StoreState {
    /// How many files are fetched at once, per thread.
    static let scanBatchPerThread = 8

    /// Calls `body` with each partition at `addresses`, in order, each verified or loaded as
    /// ``partition(_:verify:)`` does. Partitions not in memory are fetched in parallel batches,
    /// their entities decoded as `E` on the way; each is cached (within the budget) before `body`
    /// sees it, and nothing keeps it after.
    /// With `predicate`, a partition that holds exactly its file's entities, all of which decoded,
    /// comes with its matching entities in id order (the predicate ran on the worker thread too);
    /// otherwise with nil, and `body` decodes and filters.
    ///
    /// With `filter` (the predicate compiled to fields, ``FieldFilter``), a file in `scannable`
    /// that holds exactly Folio's newest version of it is not loaded at all: its entities are read
    /// field by field and only those that match are parsed and decoded; `body` then gets a
    /// ``ScannedPartition/scanned(_:ids:matches:)``.
    func forEachPartition<E: Entity>(_ addresses: [PartitionAddress], decoding type: E.Type, matching predicate: Predicate<E>?,
                                     filter: FieldFilter? = nil, scannable: (PartitionAddress) -> Bool = { _ in false },
                                     _ body: (ScannedPartition<E>) throws(FolioError) -> Void) throws(FolioError) {
        let width = Self.scanWidth
        let batchSize = width * Self.scanBatchPerThread
        var start = 0
        while start < addresses.count {
            let batch = Array(addresses[start..<min(start + batchSize, addresses.count)])
            start += batch.count
            let missing = batch.filter { !partitions.contains($0) }
            var fetched: [PartitionAddress: Result<Prefetched<E>, FolioError>] = [:]
            let scanning = filter == nil ? [] : Set(missing.filter(scannable))
            if missing.count > 1 || !scanning.isEmpty {
                let fileSystem = self.fileSystem
                let written = writtenHashes.current(fileSystem, worthReading: missing.count + fileLoads > WrittenHashesCache.worthReadingAfter)
                let results = parallelMap(missing, width: width) { address in
                    Result { () throws(FolioError) -> Prefetched<E> in
                        try Prefetched<E>.fetch(address, fileSystem: fileSystem, predicate: predicate,
                                                filter: scanning.contains(address) ? filter : nil, written: written)
                    }
                }
                for (address, result) in zip(missing, results) { fetched[address] = result }
            }
            for address in batch {
                guard let prefetched = fetched[address], !partitions.contains(address) else {
                    try body(.loaded(try partition(address), matches: nil))
                    continue
                }
                let file = try prefetched.get()
                if let scanned = file.scanned {
                    try body(.scanned(address, ids: scanned.ids, matches: scanned.matches))
                    continue
                }
                let partition = try firstLoad(address, from: file.file)
                // Exactly the file's entities: no merge, no journal records on top.
                let asFetched = file.file != nil && partition.identity == file.file?.identity && !partition.holdsMerge
                    && !partition.neverRead && partition.unreadable == nil && !touched.contains(address)
                if asFetched { file.prefill(partition) }
                try body(.loaded(partition, matches: asFetched ? file.matches : nil))
            }
        }
    }

    /// Threads for fetching files: the cores, at most 8. Asked once: on Linux the answer reads
    /// the cgroup's files, which cost more than a small query.
    static let scanWidth: Int = min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8)
}

/// A partition file fetched on a worker thread: read, parsed, and its entities decoded as `E`.
struct Prefetched<E: Entity>: Sendable {
    var file: FetchedFile?
    /// The entities that decode and whose `id` field agrees with their key; the others are left
    /// to ``Partition/values(_:coder:undecodable:)``, which reports them.
    var decoded: [String: E] = [:]
    /// When every entity decoded: those the predicate keeps (all without one), in id order; nil
    /// when some did not decode or the predicate threw (the store then decodes and reports).
    var matches: [E]?
    /// A file read field by field, not loaded: its ids, and the entities that match in id order.
    var scanned: (ids: [String], matches: [E])?

    static func fetch(_ address: PartitionAddress, fileSystem: FileSystem, predicate: Predicate<E>?,
                      filter: FieldFilter? = nil, written: WrittenHashes? = nil) throws(FolioError) -> Prefetched {
        guard let (bytes, identity) = try fileSystem.read(address.path) else { return Prefetched(file: nil) }
        // Checked once, whether the file is then scanned or parsed.
        let kept = FetchedFile.KeptCheck(bytes, path: address.path, fileSystem: fileSystem, written: written)
        if let filter, let predicate, kept.isNewest,
           let scanned = scan(bytes, filter: filter, predicate: predicate, path: address.path) {
            return Prefetched(file: nil, scanned: scanned)
        }
        let file = FetchedFile.parse(bytes, identity: identity, path: address.path, fileSystem: fileSystem, checkingKeptVersions: true, kept: kept)
        guard case .success(let contents) = file.contents else { return Prefetched(file: file) }
        var (values, _) = EntityCoder().decodeEach(E.self, from: contents.entities, path: address.path)
        for id in Array(values.keys) where Partition.keyMismatch(id: id, in: contents.entities[id]!, path: address.path) != nil {
            values[id] = nil
        }
        var fetched = Prefetched(file: file, decoded: values)
        if values.count == contents.entities.count {
            let ordered = values.keys.sorted { $0.precedesInKeyOrder($1) }.map { values[$0]! }
            do { fetched.matches = try predicate.map { predicate in try ordered.filter { try predicate.evaluate($0) } } ?? ordered } catch {
                fetched.matches = nil
            }
        }
        return fetched
    }

    /// The entities of a file Folio wrote (so it has the format's shape) that `filter` keeps and
    /// `predicate` confirms, each parsed and decoded alone; nil when the file must be loaded
    /// instead: the scanner found something unexpected, or an entity it would return does not
    /// decode, is stored under another id, or makes the predicate throw (the load reports these).
    static func scan(_ bytes: [UInt8], filter: FieldFilter, predicate: Predicate<E>, path: String) -> (ids: [String], matches: [E])? {
        guard let entries = FieldScanner.entries(bytes, keys: filter.keys) else { return nil }
        var coder: EntityCoder?
        var matches: [(id: String, entity: E)] = []
        for entry in entries {
            do {
                guard try filter.evaluate(entry.row) else { continue }
            } catch {
                // Undetermined from the fields alone: decoded and tested below.
            }
            let json: JSONValue
            do { json = try JSONParser.parse(Array(bytes[entry.range])) } catch { return nil }
            let decoder = coder ?? EntityCoder()
            coder = decoder
            guard Partition.keyMismatch(id: entry.id, in: json, path: path) == nil,
                  case .success(let entity) = decoder.decodeOne(E.self, from: json) else { return nil }
            do {
                if try predicate.evaluate(entity) { matches.append((entry.id, entity)) }
            } catch {
                return nil
            }
        }
        matches.sort { $0.id.precedesInKeyOrder($1.id) }
        return (entries.map(\.id), matches.map(\.entity))
    }

    /// Gives a partition that holds exactly the file's entities the decoded values.
    func prefill(_ partition: Partition) {
        guard !decoded.isEmpty else { return }
        partition.prefill(decoded)
    }
}

/// One partition of a scan, as ``StoreState/forEachPartition(_:decoding:matching:filter:scannable:_:)``
/// hands it over.
enum ScannedPartition<E: Entity> {
    /// In memory (loaded now or before); with the matching entities in id order when they were
    /// decoded and filtered while the file was fetched.
    case loaded(Partition, matches: [E]?)
    /// Read field by field and not loaded: the file's ids and the entities that match, in id order.
    case scanned(PartitionAddress, ids: [String], matches: [E])
}
