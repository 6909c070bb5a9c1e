internal import Foundation

/// Reading many partitions for one query: the files not in memory are read, parsed and decoded in
/// parallel, a batch at a time, then taken in one by one in order, through the partition cache
/// and its budget, so a query over years of data neither waits on one core nor keeps every file.
extension StoreState {
    /// A read that would load more files than this while `defersFileLoads` waits for the shared
    /// lock instead (see `fetch`).
    static let scanDeferral = 8

    /// How many files are fetched at once, per thread.
    static let scanBatchPerThread = 8

    /// Calls `body` with each partition at `addresses`, in order, each verified or loaded as
    /// ``partition(_:verify:)`` does. Partitions not in memory are fetched in parallel batches,
    /// their entities decoded as `E` on the way; each is cached (within the budget) before `body`
    /// sees it, and nothing keeps it after.
    /// With `predicate`, a partition that holds exactly its file's entities, all of which decoded,
    /// comes with its matching entities in id order (the predicate ran on the worker thread too);
    /// otherwise with nil, and `body` decodes and filters.
    func forEachPartition<E: Entity>(_ addresses: [PartitionAddress], decoding type: E.Type, matching predicate: Predicate<E>?,
                                     _ body: (Partition, [E]?) throws(FolioError) -> Void) throws(FolioError) {
        let width = Self.scanWidth
        let batchSize = width * Self.scanBatchPerThread
        var start = 0
        while start < addresses.count {
            let batch = Array(addresses[start..<min(start + batchSize, addresses.count)])
            start += batch.count
            let missing = batch.filter { !partitions.contains($0) }
            var fetched: [PartitionAddress: Result<Prefetched<E>, FolioError>] = [:]
            if missing.count > 1 {
                let fileSystem = self.fileSystem
                let results = parallelMap(missing, width: width) { address in
                    Result { () throws(FolioError) -> Prefetched<E> in
                        try Prefetched<E>.fetch(address, fileSystem: fileSystem, predicate: predicate)
                    }
                }
                for (address, result) in zip(missing, results) { fetched[address] = result }
            }
            for address in batch {
                guard let prefetched = fetched[address], !partitions.contains(address) else {
                    try body(try partition(address), nil)
                    continue
                }
                let file = try prefetched.get()
                let partition = try firstLoad(address, from: file.file)
                // Exactly the file's entities: no merge, no journal records on top.
                let asFetched = file.file != nil && partition.identity == file.file?.identity && !partition.holdsMerge
                    && !partition.neverRead && partition.unreadable == nil && !touched.contains(address)
                if asFetched { file.prefill(partition) }
                try body(partition, asFetched ? file.matches : nil)
            }
        }
    }

    /// Threads for fetching files: the cores, at most 8.
    static var scanWidth: Int {
        min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8)
    }
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

    static func fetch(_ address: PartitionAddress, fileSystem: FileSystem, predicate: Predicate<E>?) throws(FolioError) -> Prefetched {
        guard let file = try FetchedFile.fetch(address.path, fileSystem: fileSystem, checkingKeptVersions: true) else {
            return Prefetched(file: nil)
        }
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

    /// Gives a partition that holds exactly the file's entities the decoded values.
    func prefill(_ partition: Partition) {
        guard !decoded.isEmpty else { return }
        partition.prefill(decoded)
    }
}
