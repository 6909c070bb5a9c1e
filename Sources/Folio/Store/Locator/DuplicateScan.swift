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
            if ids.parsed == nil, !QuotedID.hasEscape(ids.line) {
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
