/// Which partitions may leave memory (PartitionCache.swift), and what the store keeps of one
/// that leaves.
extension StoreEngine {
    /// Whether a partition must stay in memory whatever the cache's budget: dropping it would lose
    /// state that its file does not hold, or that observers and hand-edit adoption rely on.
    ///
    /// - records of the journal's current generation touch it (the file does not hold them yet),
    ///   or its state differs from the file in any other way (a merge to write; a partition differs
    ///   from its file only so);
    /// - its file is broken and the last good state read from it is served (FORMAT.md, "Editing
    ///   by hand"), or it never parsed and holds only the journal's changes;
    /// - a person's save of it waits to be adopted, was absorbed during a compare-and-swap, or was
    ///   adopted and the checkpoint has yet to make it Folio's version;
    /// - the store is observed: a change to a partition is announced by comparing it with what
    ///   was served, so every partition read stays while anyone observes (the budget applies
    ///   again when the last observer leaves), and one whose announcement is pending stays.
    func mustStayInMemory(_ partition: Partition) -> Bool {
        let address = partition.address
        return feed.isTracking || touched.contains(address) || partition.holdsMerge || partition.adoptedSave
            || partition.unreadable != nil || partition.neverRead || feed.announcement(of: address) != nil
            || handEdits.waits(at: address)
    }

    /// Whether what this process holds of a partition is exactly its file: none in memory, or
    /// one that may leave (nothing in the journal, no merge, no save to adopt, not observed).
    /// Then what the saved id index says of the file holds for the partition too.
    func memoryIsFile(_ address: PartitionAddress) -> Bool {
        !touched.contains(address) && (partitions.peek(address).map { !mustStayInMemory($0) } ?? true)
    }
}

extension StoreEngine {
    /// What the partitions in memory cost, and what reads did (``Store/cacheFootprint()``).
    var cacheFootprint: Store.CacheFootprint {
        Store.CacheFootprint(
            estimatedBytes: partitions.estimatedBytes, mustStayBytes: partitions.mustStayBytes,
            paths: Set(partitions.addresses.map(\.path)), evictions: partitions.evictions,
            partitionsScanned: statistics.partitionsScanned, partitionsFromFieldIndex: statistics.partitionsFromFieldIndex,
            partitionsFromColumns: statistics.partitionsFromColumns)
    }
}

/// What the id locator asks of the partitions (``PartitionSource``).
extension StoreEngine: PartitionSource {
    func memoryIsFiles(in collection: String) -> Bool {
        !touched.contains { $0.collection == collection }
            && partitions.addresses.allSatisfy { $0.collection != collection || memoryIsFile($0) }
    }

    func identityInMemory(of address: PartitionAddress) -> FileIdentity? {
        partitions.peek(address)?.identity
    }

    func putOffFileLoadIfLockFree() -> Bool {
        guard readPass.putsOffFileLoads else { return false }
        putOffFileLoad()
        return true
    }
}

/// What the version history reads of the engine (``HistoryContext``).
extension StoreEngine: HistoryContext {
    var fileLoadsSoFar: Int { statistics.fileLoads }
}
