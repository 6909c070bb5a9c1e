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
    /// How many bytes of the field index's columns a query loads, at most, per file whose
    /// selected rows it would otherwise read from the file: reading a file's rows costs about what
    /// loading this much of the index does (an open, a `pread` and a close against checking and
    /// splitting bytes in memory, both warm); with a cold page cache the columns win by more.
    static let columnBytesPerFileRead = 16 << 10

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
        filter: FieldFilter?, scannable: (PartitionAddress) -> Bool,
        _ body: (ScannedPartition<E>) throws(FolioError) -> Void
    ) throws(FolioError) {
        let width = Self.scanWidth
        var fieldIndex = self.fieldIndex.update(for: E.collection)
        let identities: [PartitionKey: FileIdentity]
        let unread = filter == nil ? [] : addresses.filter { !partitions.contains($0) && scannable($0) }
        if let filter, !unread.isEmpty {
            let prefetch = IdentityPrefetch(unread, fileSystem: fileSystem)
            fieldIndex.load(fields: Set(filter.keys))
            identities = prefetch.wait()
        } else {
            identities = [:]
        }
        var start = 0
        // Files whose columns hold their entities whole, with rows selected, this query so far.
        var awaitingFiles = 0
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
                    : writtenHashes.current(fileSystem, fileLoads: reading + statistics.fileLoads)
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
                awaitingFiles += takeAwaiting(
                    &results, of: missing + unindexed, fieldIndex: &fieldIndex, awaitingBefore: awaitingFiles,
                    predicate: predicate, filter: filter)
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
                    if file.fromIndex { notePartitionFromFieldIndex(fromColumns: file.fromColumns) }
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
        self.fieldIndex.finish(fieldIndex, scanned: addresses)
    }

    /// Takes the matches of the files among `results` that await them (``Prefetched/awaiting``):
    /// from the columns, once the query has seen enough such files to load the rest of the index's
    /// columns (``columnBytesPerFileRead``), else from the files; a file whose matches cannot be
    /// taken so is read whole. Returns how many files awaited.
    private func takeAwaiting<E: Entity>(
        _ results: inout [Result<Prefetched<E>, FolioError>], of fetched: [PartitionAddress], fieldIndex: inout FieldIndexUpdate,
        awaitingBefore: Int, predicate: Predicate<E>?, filter: FieldFilter?
    ) -> Int {
        let awaiting = results.indices.filter { index in
            if case .success(let fetched) = results[index] { fetched.awaiting != nil } else { false }
        }
        guard !awaiting.isEmpty, let predicate, let filter else { return 0 }
        if (awaitingBefore + awaiting.count) * Self.columnBytesPerFileRead >= fieldIndex.otherColumnsBytes { fieldIndex.loadOtherColumns() }
        let entries = fieldIndex.entries, fileSystem = self.fileSystem, waiting = results
        let taken = parallelMap(awaiting, width: Self.scanWidth) { index in
            Result { () throws(FolioError) -> Prefetched<E> in
                let address = fetched[index]
                if case .success(let file) = waiting[index], let rows = file.awaiting, let entry = entries[address.key],
                    let taken = Prefetched.taking(rows, of: address, entry, fileSystem: fileSystem, filter: filter, predicate: predicate)
                {
                    return taken
                }
                return try Prefetched<E>.fetch(address, fileSystem: fileSystem, predicate: predicate)
            }
        }
        for (index, result) in zip(awaiting, taken) { results[index] = result }
        return awaiting.count
    }

    /// Threads for fetching files: the cores, at most 8. Asked once: on Linux the answer reads
    /// the cgroup's files, which cost more than a small query.
    static let scanWidth: Int = min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8)
}
