internal import Foundation

/// Reading many partitions for one query: the files not in memory are read, parsed and decoded in
/// parallel, a batch at a time, then taken in one by one in order, through the partition cache
/// and its budget, so a query over years of data neither waits on one core nor keeps every file.
extension StoreEngine {
    /// How many files read whole are fetched at once, per thread (each is kept whole until its turn).
    static let scanBatchPerThread = 8
    /// How many files filtered on fields but not from the field index are fetched at once, per
    /// thread: most keep only their matches (one a person changed is kept whole).
    static let fieldScanBatchPerThread = 64
    /// How many files in all are fetched at once, per thread, when most come from the field index:
    /// each keeps only its matches, so large batches cost little memory, and the threads wait
    /// less on the calling one, which takes the results in between.
    static let indexedScanBatchPerThread = 1024

    /// Where the batch of `addresses` that starts at `start` ends: at most `heavyPerThread` files
    /// per thread to fetch that are neither in memory nor `light` (filtered on their field index
    /// entry, whose file has the recorded identity), and at most ``indexedScanBatchPerThread`` in all.
    private func batchEnd(
        _ addresses: [PartitionAddress], from start: Int, width: Int, heavyPerThread: Int,
        light: (PartitionAddress) -> Bool
    ) -> Int {
        var end = start, heavy = 0
        while end < addresses.count, end - start < width * Self.indexedScanBatchPerThread {
            if !light(addresses[end]) && !partitions.contains(addresses[end]) {
                guard heavy < width * heavyPerThread else { break }
                heavy += 1
            }
            end += 1
        }
        return end
    }

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
    func forEachPartition<E: Entity>(
        _ addresses: [PartitionAddress], decoding type: E.Type, matching predicate: Predicate<E>?,
        filter: FieldFilter? = nil, scannable: (PartitionAddress) -> Bool = { _ in false },
        _ body: (ScannedPartition<E>) throws(FolioError) -> Void
    ) throws(FolioError) {
        let width = Self.scanWidth
        var fieldIndex = FieldIndexUpdate(collection: E.collection)
        let identities: [PartitionKey: FileIdentity]
        let unread = filter == nil ? [] : addresses.filter { !partitions.contains($0) && scannable($0) }
        if let filter, !unread.isEmpty {
            let prefetch = IdentityPrefetch(unread, fileSystem: fileSystem)
            if ScanAccelerators.enabled.contains(.index) { fieldIndex.load(fileSystem, fields: Set(filter.keys)) }
            identities = prefetch.wait()
        } else {
            identities = [:]
        }
        var start = 0
        while start < addresses.count {
            let end = batchEnd(
                addresses, from: start, width: width,
                heavyPerThread: filter == nil ? Self.scanBatchPerThread : Self.fieldScanBatchPerThread
            ) { address in
                guard filter != nil, let identity = identities[address.key] else { return false }
                return fieldIndex.entries[address.key]?.identity == identity && scannable(address)
            }
            let batch = addresses[start..<end]
            start = end
            let missing = batch.filter { !partitions.contains($0) }
            let scanning = filter == nil ? [] : Set(missing.filter(scannable))
            // In memory but without an entry of its file as it is, in a loaded field index (the
            // sample partition of the filter, a file read by an earlier query): read once more,
            // for its entry only.
            let unindexed =
                !fieldIndex.isLoaded
                ? []
                : batch.filter { address in
                    guard let partition = partitions.peek(address), scannable(address) else { return false }
                    return fieldIndex.entries[address.key]?.identity != partition.identity
                }
            // The results of `missing`, then of `unindexed` (never the same partition: one is in
            // memory, the other not); none when one file alone is missing (it is loaded below).
            var results: [Result<Prefetched<E>, FolioError>] = []
            if missing.count > 1 || !scanning.isEmpty || !unindexed.isEmpty {
                let fileSystem = self.fileSystem
                let indexed = fieldIndex.entries
                // Files read whole need the written log's hashes; those read from the field index do not.
                let reading = missing.filter { !scanning.contains($0) || indexed[$0.key] == nil }.count
                let written =
                    reading == 0
                    ? nil
                    : writtenHashes.current(fileSystem, worthReading: reading + statistics.fileLoads >= WrittenHashesCache.worthReadingAfter)
                let unindexedSet = Set(unindexed)
                results = parallelMap(missing + unindexed, width: width) { address in
                    Result { () throws(FolioError) -> Prefetched<E> in
                        let scanned = scanning.contains(address) || unindexedSet.contains(address)
                        return try Prefetched<E>.fetch(
                            address, fileSystem: fileSystem, predicate: predicate, filter: scanned ? filter : nil,
                            written: written, indexed: scanned ? indexed[address.key] : nil,
                            identity: identities[address.key])
                    }
                }
                for (index, address) in missing.enumerated() where scanning.contains(address) { fieldIndex.note(address.key, results[index]) }
                for (index, address) in unindexed.enumerated() { fieldIndex.note(address.key, results[missing.count + index]) }
            }
            var nextMissing = 0
            for address in batch {
                var prefetched: Result<Prefetched<E>, FolioError>?
                if nextMissing < missing.count, missing[nextMissing] == address {
                    prefetched = results.isEmpty ? nil : results[nextMissing]
                    nextMissing += 1
                }
                guard let prefetched, !partitions.contains(address) else {
                    let loaded = try partition(address)
                    try body(.loaded(loaded, matches: nil, vouched: fieldIndex.vouches(for: loaded, touched: touched)))
                    continue
                }
                let file = try prefetched.get()
                if let scanned = file.scanned {
                    if file.fromIndex { notePartitionFromFieldIndex() }
                    try body(.scanned(address, ids: scanned.ids, matches: scanned.matches, vouched: file.fromIndex && fieldIndex.idsAreUnique))
                    continue
                }
                let partition = try firstLoad(address, from: file.file)
                // Exactly the file's entities: no merge, no journal records on top.
                let asFetched =
                    file.file != nil && partition.identity == file.file?.identity && !partition.holdsMerge
                    && !partition.neverRead && partition.unreadable == nil && !touched.contains(address)
                if asFetched { file.prefill(partition) }
                try body(.loaded(partition, matches: asFetched ? file.matches : nil, vouched: false))
            }
        }
        // Saved by the store after the query (Store+DerivedIndexes.swift): a query never writes.
        if !isReadOnly, ScanAccelerators.enabled.contains(.index), let changes = fieldIndex.changes(scanned: addresses) {
            noteFieldIndexChanges(changes)
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
    var scanned: (ids: ScannedIDs, matches: [E])?

    /// A field index entry made from this file while it was read (it holds Folio's newest
    /// version of itself and had settled, ``FieldIndexFile``); nil when none could be made.
    var indexEntry: FieldIndexFile.Record?
    /// Filtered on its field index entry: the file was not read whole.
    var fromIndex = false

    /// Reads the file at `address` and takes what a query needs from it.
    /// - Parameters:
    ///   - filter: The predicate on fields: the file is scanned instead of loaded where it can be,
    ///     and a field index entry is made of it.
    ///   - indexed: The file's field index entry: used instead of the file while the file has
    ///     the entry's identity.
    static func fetch(
        _ address: PartitionAddress, fileSystem: FileSystem, predicate: Predicate<E>?,
        filter: FieldFilter? = nil, written: WrittenHashes? = nil, indexed: FieldIndexFile.Record? = nil,
        identity: FileIdentity? = nil
    ) throws(FolioError) -> Prefetched {
        if let indexed, let filter, let predicate,
            let found = fromIndex(address, indexed, identity: identity, fileSystem: fileSystem, filter: filter, predicate: predicate)
        {
            return found
        }
        let readAt = FileIdentity.now
        guard let (bytes, identity) = try fileSystem.read(address.path) else { return Prefetched(file: nil) }
        // Checked once, whether the file is then scanned or parsed.
        let kept = FetchedFile.KeptCheck(bytes, path: address.path, fileSystem: fileSystem, written: written)
        var entry: FieldIndexFile.Record?
        if filter != nil, kept.isNewest, FieldIndexFile.isSettled(identity, readAt: readAt), let columns = FieldScanner.columns(bytes) {
            entry = FieldIndexFile.Record(identity: identity, columns: columns)
        }
        // A file just taken apart for the index is filtered on those columns, not walked again.
        if let filter, let predicate, let entry,
            let scanned = filtered(entry, filter: filter, predicate: predicate, path: address.path, read: { bytes[$0] })
        {
            return Prefetched(file: nil, scanned: scanned, indexEntry: entry)
        }
        if let filter, let predicate, kept.isNewest, entry == nil, let entries = FieldScanner.entries(bytes, keys: filter.keys) {
            var candidates: [Candidate] = []
            for entry in entries {
                do {
                    if try filter.evaluate(entry.row) { candidates.append((entry.id, bytes[entry.range], entry.row)) }
                } catch {
                    candidates.append((entry.id, bytes[entry.range], nil))   // undetermined: decoded and tested
                }
            }
            if let matches = matching(candidates, filter: filter, predicate: predicate, path: address.path) {
                return Prefetched(file: nil, scanned: (ScannedIDs(entries.map { $0.id }), matches), indexEntry: entry)
            }
        }
        let file = FetchedFile.parse(bytes, identity: identity, path: address.path, fileSystem: fileSystem, checkingKeptVersions: true, kept: kept)
        guard case .success(let contents) = file.contents else { return Prefetched(file: file) }
        var (values, _) = EntityCoder().decodeEach(E.self, from: contents.entities, path: address.path)
        for id in Array(values.keys) where Partition.keyMismatch(id: id, in: contents.entities[id]!, path: address.path) != nil {
            values[id] = nil
        }
        var fetched = Prefetched(file: file, decoded: values, indexEntry: entry)
        if values.count == contents.entities.count {
            let ordered = values.keys.sorted { $0.precedesInKeyOrder($1) }.map { values[$0]! }
            do { fetched.matches = try predicate.map { predicate in try ordered.filter { try predicate.evaluate($0) } } ?? ordered } catch {
                fetched.matches = nil
            }
        }
        return fetched
    }

    /// The file's ids and matching entities from its field index entry, reading from the file
    /// only the objects of the entities the filter keeps (or cannot decide); nil when the file no
    /// longer has the entry's identity or anything is unexpected (the file is then read whole).
    /// `identity`: the file's, when it was taken already during this query (``IdentityPrefetch``).
    static func fromIndex(
        _ address: PartitionAddress, _ entry: FieldIndexFile.Record, identity: FileIdentity?, fileSystem: FileSystem,
        filter: FieldFilter, predicate: Predicate<E>
    ) -> Prefetched? {
        do {
            guard try (identity ?? fileSystem.identity(address.path)) == entry.identity else { return nil }
        } catch {
            return nil   // the read that follows reports it
        }
        let scanned = filtered(entry, filter: filter, predicate: predicate, path: address.path) { span in
            do {
                return try fileSystem.read(address.path, range: span, ifIdentity: entry.identity).map { ArraySlice($0) }
            } catch {
                return nil   // the read of the whole file that follows reports it
            }
        }
        return scanned.map { Prefetched(file: nil, scanned: $0, fromIndex: true) }
    }

    /// A file's ids and matching entities from a field index entry of it: the filter runs on the
    /// entry's columns, and only the objects of the entities it keeps (or cannot decide) are
    /// taken from the file, through `read` (the file's bytes in a range, or nil). Nil when
    /// anything is unexpected: the file is then read whole.
    static func filtered(
        _ entry: FieldIndexFile.Record, filter: FieldFilter, predicate: Predicate<E>, path: String,
        read: (Range<Int>) -> ArraySlice<UInt8>?
    ) -> (ids: ScannedIDs, matches: [E])? {
        // The ids are taken apart only for a file with candidates: otherwise checking that the
        // line holds `count` strings is enough (the scan may never ask for them).
        guard FieldScanner.holdsStrings(entry.ids, count: entry.count) else { return nil }
        // The rows that may meet what the predicate requires (a word in a string), found
        // on the columns' bytes; only they are read into values and evaluated.
        var keeping: [Bool]?
        for requirement in filter.requirements {
            let rows: [Bool]?
            switch requirement {
            case .word(let slot, let word):
                guard let line = entry.fields[filter.keys[slot]] else { continue }   // none has it: undetermined
                rows = FieldScanner.rows(line, mayContain: word, count: entry.count)
            }
            guard let rows else { return nil }
            keeping = keeping.map { zip($0, rows).map { $0 && $1 } } ?? rows
            if keeping?.contains(true) == false { break }
        }
        var columns: [[FieldValue]?] = []
        if keeping?.contains(true) != false {
            for key in filter.keys {
                guard let line = entry.fields[key] else {
                    columns.append(nil)   // no entity of the file has it
                    continue
                }
                guard let values = FieldScanner.values(line, keeping: keeping), values.count == entry.count else { return nil }
                columns.append(values)
            }
        }
        // Each candidate with the row the filter held true (nil: undetermined).
        var candidates: [(index: Int, row: FieldRow?)] = []
        var row = FieldRow(values: Array(repeating: nil, count: filter.keys.count))   // one row, refilled
        for index in 0..<entry.count where keeping?[index] ?? true {
            for (slot, column) in columns.enumerated() { row.values[slot] = column?[index] }
            do {
                if try filter.evaluate(row) { candidates.append((index, row)) }
            } catch {
                candidates.append((index, nil))   // undetermined: decoded and tested
            }
        }
        var found: [Candidate] = []
        if let first = candidates.first?.index, let last = candidates.last?.index {
            guard let ids = FieldScanner.stringRanges(entry.ids), ids.count == entry.count, let ranges = entry.fileRanges() else { return nil }
            let span = ranges[first].lowerBound..<ranges[last].upperBound
            guard let bytes = read(span), bytes.count == span.count else { return nil }
            for (index, row) in candidates {
                guard let id = FieldScanner.string(entry.ids, at: ids[index]) else { return nil }
                let start = bytes.startIndex + ranges[index].lowerBound - span.lowerBound
                found.append((id, bytes[start..<(start + ranges[index].count)], row))
            }
        }
        guard let matches = matching(found, filter: filter, predicate: predicate, path: path) else { return nil }
        return (ScannedIDs(line: entry.ids), matches)
    }

    /// An entity the filter kept: its id, its object's bytes, and the row the filter held true
    /// (nil when the filter could not decide).
    typealias Candidate = (id: String, object: ArraySlice<UInt8>, row: FieldRow?)

    /// The candidates that match, each parsed and decoded alone, in id order; nil when one of
    /// them does not parse, decode, carry its own id, or makes the predicate throw (the file is
    /// then loaded, and the load reports these).
    ///
    /// A candidate the filter held true whose decoded properties are exactly the values the
    /// filter read (``FieldFilter/agreement(_:)``) matches: the filter computed the predicate on
    /// those very values. Any other is tested against `predicate`, so a property that does not
    /// decode as its field reads (a mapping the probe got wrong) costs time, never a wrong answer.
    static func matching(_ candidates: [Candidate], filter: FieldFilter, predicate: Predicate<E>, path: String) -> [E]? {
        guard !candidates.isEmpty else { return [] }
        let coder = EntityCoder()
        let agrees = filter.agreement(E.self)
        var ids: [String] = [], matches: [E] = []
        ids.reserveCapacity(candidates.count)
        matches.reserveCapacity(candidates.count)
        for (id, object, row) in candidates {
            let json: JSONValue
            do { json = try JSONParser.parse(Array(object)) } catch { return nil }
            guard Partition.keyMismatch(id: id, in: json, path: path) == nil,
                case .success(let entity) = coder.decodeOne(E.self, from: json)
            else { return nil }
            if let row, let agrees, agrees(entity, row) {
                ids.append(id)
                matches.append(entity)
                continue
            }
            do {
                if try predicate.evaluate(entity) {
                    ids.append(id)
                    matches.append(entity)
                }
            } catch {
                return nil
            }
        }
        // Folio writes a file's entities in id order: sorting is rarely needed.
        var index = 1
        while index < ids.count, ids[index - 1].precedesInKeyOrder(ids[index]) { index += 1 }
        guard index < ids.count else { return matches }
        return zip(ids, matches).sorted { $0.0.precedesInKeyOrder($1.0) }.map { $0.1 }
    }

    /// Gives a partition that holds exactly the file's entities the decoded values.
    func prefill(_ partition: Partition) {
        guard !decoded.isEmpty else { return }
        partition.prefill(decoded)
    }
}

/// One partition of a scan, as ``StoreEngine/forEachPartition(_:decoding:matching:filter:scannable:_:)``
/// hands it over.
enum ScannedPartition<E: Entity> {
    /// In memory (loaded now or before); with the matching entities in id order when they were
    /// decoded and filtered while the file was fetched. `vouched`: it holds exactly the entities
    /// of a file that a field index holding no id twice has an entry of (``DuplicateScan``).
    case loaded(Partition, matches: [E]?, vouched: Bool)
    /// Read field by field and not loaded: the file's ids and the entities that match, in id order.
    /// `vouched`: read from a field index that holds no id twice (``DuplicateScan``).
    case scanned(PartitionAddress, ids: ScannedIDs, matches: [E], vouched: Bool)
}

/// The ids of a file read field by field: as read from the file, or a field index's ids line,
/// made into strings only when asked for (a scan whose files the index vouches for never asks).
struct ScannedIDs: Sendable {
    /// The ids as strings, when they were read as such.
    let parsed: [String]?
    /// A field index's ids line.
    let line: ArraySlice<UInt8>

    init(_ ids: [String]) {
        (parsed, line) = (ids, [])
    }

    /// A field index's `["…",…]` line, already checked to be one.
    init(line: ArraySlice<UInt8>) {
        (parsed, self.line) = (nil, line)
    }

    /// Where each id lies in ``line`` (with its quotes).
    var ranges: [Range<Int>] { FieldScanner.stringRanges(line) ?? [] }

    var all: [String] { parsed ?? FieldScanner.strings(line) ?? [] }
}
