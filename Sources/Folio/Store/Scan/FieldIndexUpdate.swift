/// What one query does to a collection's field index (``FieldIndexFile``): loads the columns it
/// filters on once, when it first filters files on fields, notes each file's outcome, and saves
/// the index at the end if an entry was made, replaced or found stale.
struct FieldIndexUpdate {
    let collection: String
    /// The entries with the query's columns, as loaded.
    private(set) var entries: [PartitionKey: FieldIndexFile.Record] = [:]
    /// The saved index holds no id twice (``FieldIndexFile/Contents/idsAreUnique``).
    private(set) var idsAreUnique = false
    /// Entries made by this query (every column), and keys whose entry went stale.
    private var made: [PartitionKey: FieldIndexFile.Record] = [:]
    private var stale: Set<PartitionKey> = []
    private(set) var isLoaded = false

    init(collection: String) {
        self.collection = collection
    }

    /// Reads the saved index's columns `fields`, the first time only.
    mutating func load(_ fileSystem: FileSystem, fields: Set<String>) {
        guard !isLoaded else { return }
        isLoaded = true
        let contents = FieldIndexFile.read(fileSystem, collection: collection, fields: fields)
        (entries, idsAreUnique) = (contents.entries, contents.idsAreUnique)
    }

    /// Notes how the file of `key` was fetched: from its entry (nothing changes), with a new
    /// entry made of it, or read without one (an entry it had is stale, and dropped).
    mutating func note<E>(_ key: PartitionKey, _ result: Result<Prefetched<E>, FolioError>) {
        switch result {
        case .success(let fetched) where fetched.fromIndex:
            return
        case .success(let fetched) where fetched.indexEntry != nil:
            made[key] = fetched.indexEntry
        default:
            if entries[key] != nil { stale.insert(key) }
        }
    }

    /// Whether `partition`, in memory, holds exactly the entities of a file the index has an
    /// unchanged entry of, in an index that holds no id twice (so its ids need no comparing with
    /// those of the partitions read from the index).
    func vouches(for partition: Partition, touched: Set<PartitionAddress>) -> Bool {
        guard idsAreUnique, let identity = partition.identity, entries[partition.address.key]?.identity == identity else { return false }
        return !touched.contains(partition.address) && !partition.holdsMerge && partition.unreadable == nil
    }

    /// Saves the index if this query changed it. Entries of files that no longer exist (keys
    /// within the span of `scanned` that it does not list) are dropped on the way.
    /// - Returns: Why the index could not be saved (it is derived data: the caller only reports it).
    mutating func save(_ fileSystem: FileSystem, scanned: [PartitionAddress]) -> FolioError? {
        guard !made.isEmpty || !stale.isEmpty, let first = scanned.first?.key, let last = scanned.last?.key else { return nil }
        // Every column of the entries kept: read again whole (this query read only its columns).
        var entries = FieldIndexFile.read(fileSystem, collection: collection, fields: nil).entries
        for key in stale { entries[key] = nil }
        entries.merge(made) { _, new in new }
        let listed = Set(scanned.map(\.key))
        for key in Array(entries.keys) where key >= first && key <= last && !listed.contains(key) { entries[key] = nil }
        (made, stale) = ([:], [])
        do {
            try FieldIndexFile.write(fileSystem, collection: collection, entries: entries)
            return nil
        } catch {
            return error
        }
    }
}
