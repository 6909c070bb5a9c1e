/// One id in two partition files of a collection (a hand edit copied an entity into another day,
/// or a sync tool brought back an old file). Reads never pick one copy silently and writes never
/// overwrite either: `get` and every write of that id refuse with an error naming both files,
/// queries skip both copies and log the error, until a person deletes the wrong copy
/// (FORMAT.md, "Partition files").
extension StoreState {
    /// Records that `address` holds `id`, noting a second file that holds it too.
    func index(_ id: String, in address: PartitionAddress) {
        let collection = address.collection
        if let other = idIndex.key(of: id, in: collection), other != address.key {
            let otherAddress = PartitionAddress(collection: collection, granularity: address.granularity, key: other)
            // Check the other file as it is now (another process may have moved the entity).
            let holds: Bool
            do { holds = try partition(otherAddress).entities[id] != nil } catch { holds = false }
            if holds, idIndex.key(of: id, in: collection) != address.key { noteDuplicate(id, in: [address, otherAddress]) }
        }
        if idIndex.copies(of: id, in: collection) == nil || idIndex.key(of: id, in: collection) == nil {
            idIndex.place(id, at: address.key, in: collection)
        }
    }

    /// Records that the files at `addresses` all hold `id`, and reports it the first time.
    func noteDuplicate(_ id: String, in addresses: [PartitionAddress]) {
        guard let collection = addresses.first?.collection else { return }
        let before = idIndex.copies(of: id, in: collection) ?? []
        let keys = before.union(addresses.map(\.key))
        guard keys != before else { return }
        idIndex.setCopies(keys, of: id, in: collection)
        let error = duplicateError(collection: collection, granularity: addresses[0].granularity, id: id, keys: keys)
        report(.error, error.message, path: error.path.map { path in error.line.map { "\(path):\($0):\(error.column ?? 1)" } ?? path })
    }

    /// After `address` stopped holding `id`.
    func forgetCopy(of id: String, in address: PartitionAddress) {
        let collection = address.collection
        guard var keys = idIndex.copies(of: id, in: collection) else { return }
        keys.remove(address.key)
        if keys.count > 1 {
            idIndex.setCopies(keys, of: id, in: collection)
        } else {
            idIndex.setCopies(nil, of: id, in: collection)
            if let remaining = keys.first { idIndex.place(id, at: remaining, in: collection) }
        }
    }

    /// Throws if `id` is known to be in more than one file, after checking the files again (a
    /// person may have deleted a copy since).
    func refuseDuplicate(collection: String, granularity: PartitionGranularity, id: String) throws(FolioError) {
        guard let keys = idIndex.copies(of: id, in: collection) else { return }
        for key in keys.sorted() {
            let address = PartitionAddress(collection: collection, granularity: granularity, key: key)
            do {
                let partition = try partition(address)
                if partition.entities[id] == nil { forgetCopy(of: id, in: address) }
            } catch where error.code == .corruptFile {
                continue
            }
        }
        guard let now = idIndex.copies(of: id, in: collection), now.count > 1 else { return }
        throw duplicateError(collection: collection, granularity: granularity, id: id, keys: now)
    }

    /// The error naming every file that holds `id`, located at the entity in the first one.
    func duplicateError(collection: String, granularity: PartitionGranularity, id: String, keys: Set<PartitionKey>) -> FolioError {
        let paths = keys.sorted().map { PartitionAddress(collection: collection, granularity: granularity, key: $0).path }
        var position: JSONKeyLocator.Position?
        do throws(FolioError) {
            if let (bytes, _) = try fileSystem.read(paths[0]) { position = JSONKeyLocator(bytes).position(of: ["entities", id]) }
        } catch {
            // Unreadable now: the error names the files without a line.
        }
        return FolioError(.corruptFile, "entity \"\(id)\" is in \(paths.count) files (\(paths.joined(separator: ", "))): an entity lives in exactly one partition file; Folio neither reads nor writes it until you delete the copy that is wrong",
                          path: paths[0], line: position?.line, column: position?.column, entityID: id)
    }

    /// The ids a query's scan found in more than one of its partitions (or known to be in another
    /// file too), noted as duplicates.
    func duplicateIDs(_ scan: DuplicateScan) -> Set<String> {
        var found: Set<String> = []
        for (id, first, second) in scan.pairs {
            found.insert(id)
            noteDuplicate(id, in: [first, second])
        }
        guard let known = idIndex.copies(in: scan.collection), let granularity = scan.granularity else { return found }
        for id in known.keys.sorted() where !found.contains(id) && !known[id]!.isDisjoint(with: scan.keys) {
            // Known from the index: the other copy may be outside this selection.
            do { try refuseDuplicate(collection: scan.collection, granularity: granularity, id: id) } catch { found.insert(id) }
        }
        return found
    }
}

/// What a query's scan notes of each partition it reads, to find ids held twice without keeping
/// the partitions.
struct DuplicateScan {
    let collection: String
    /// Whether the collection's id index is built: then every loaded partition's ids went
    /// through `index(_:in:)`, which notes duplicates, and only the known ones need checking.
    let indexed: Bool
    private(set) var granularity: PartitionGranularity?
    private(set) var keys: Set<PartitionKey> = []
    private(set) var pairs: [(id: String, first: PartitionAddress, second: PartitionAddress)] = []
    /// Each id met so far, with the partition it was met in (an index into `noted`).
    private var seen: [String: Int] = [:]
    private var noted: [PartitionAddress] = []

    /// How many partitions the scan will note, to size `seen` once.
    private let expectedPartitions: Int

    init(collection: String, indexed: Bool, partitions: Int = 1) {
        self.collection = collection
        self.indexed = indexed
        self.expectedPartitions = partitions
    }

    /// Partitions read from a field index that holds no id twice (``FieldIndexFile``): their
    /// ids are compared with the others' only if some partition of the scan is not such a one.
    private var vouched: [(address: PartitionAddress, ids: ScannedIDs)] = []

    /// Notes a partition read field by field; `vouched` when its ids came from a field index
    /// entry of an unchanged file and the index holds no id twice.
    mutating func note(_ address: PartitionAddress, ids: ScannedIDs, vouched: Bool) {
        guard vouched, !indexed else { return note(address, ids: ids.all) }
        granularity = address.granularity
        keys.insert(address.key)
        self.vouched.append((address, ids))
    }

    /// Compares the vouched partitions' ids with the others', unless every partition noted was
    /// vouched for. The vouched ones hold no id twice among themselves, so only the others' ids
    /// are looked for in theirs: as the bytes of the index's ids lines (an id Folio wrote is
    /// quoted as it is), without making each of years of ids a string. A line with an escape
    /// (`\`) is compared the slow way, id by id.
    mutating func finish() {
        let deferred = vouched
        vouched = []
        guard !noted.isEmpty, !deferred.isEmpty else { return }
        var quoted: [QuotedID: Int] = [:]
        quoted.reserveCapacity(seen.count)
        for (id, partition) in seen { quoted[QuotedID(ArraySlice(("\"" + id + "\"").utf8))] = partition }
        for (address, ids) in deferred {
            if let parsed = ids.parsed {
                for id in parsed { if let other = seen[id] { pairs.append((id, noted[other], address)) } }
            } else if !QuotedID.hasEscape(ids.line) {
                for range in ids.ranges {
                    guard let other = quoted[QuotedID(ids.line[range])] else { continue }
                    pairs.append((String(decoding: ids.line[range].dropFirst().dropLast(), as: UTF8.self), noted[other], address))
                }
            } else {
                for id in ids.all { if let other = seen[id] { pairs.append((id, noted[other], address)) } }
            }
        }
    }

    /// Notes a partition read field by field (not loaded), by its file's ids.
    mutating func note(_ address: PartitionAddress, ids: some Sequence<String>) {
        granularity = address.granularity
        keys.insert(address.key)
        guard !indexed else { return }
        noted.append(address)
        if seen.isEmpty, vouched.isEmpty {
            // Sized from the first partition: growing a dictionary of years of ids step by step
            // costs more than the lookups.
            seen.reserveCapacity(min(ids.underestimatedCount * expectedPartitions * 5 / 4, 1 << 22))
        }
        for id in ids {
            if let other = seen.updateValue(noted.count - 1, forKey: id) { pairs.append((id, noted[other], address)) }
        }
    }
}
