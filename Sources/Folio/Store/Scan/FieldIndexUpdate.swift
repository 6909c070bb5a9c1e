/// What one query does with a collection's field index (``FieldIndexFile``): loads the columns it
/// filters on once, when it first filters files on fields, notes each file's outcome, and at the
/// end says what changed (``changes(scanned:)``) for the store to save after the query.
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

    /// What this query found to change in the index (entries made, entries gone stale), for the
    /// store to save after the query (``FieldIndexChanges``); nil when nothing changed. A query
    /// never writes the index itself.
    func changes(scanned: [PartitionAddress]) -> FieldIndexChanges? {
        guard !made.isEmpty || !stale.isEmpty, let first = scanned.first?.key, let last = scanned.last?.key else { return nil }
        return FieldIndexChanges(collection: collection, made: made, stale: stale, span: first...last, listed: Set(scanned.map(\.key)))
    }
}

/// What a query found to change in a collection's field index, saved after the query by the store
/// (a step it runs when reads have been quiet, at checkpoints and at close), never by the query.
struct FieldIndexChanges {
    let collection: String
    /// Entries made from files the query read (every column).
    let made: [PartitionKey: FieldIndexFile.Record]
    /// Keys whose entry no longer describes its file.
    let stale: Set<PartitionKey>
    /// The span of keys the query listed, and the keys it found: entries within the span of files
    /// that no longer exist are dropped.
    let span: ClosedRange<PartitionKey>
    let listed: Set<PartitionKey>

    /// Applies these changes to a collection's entries.
    func apply(to entries: inout [PartitionKey: FieldIndexFile.Record]) {
        for key in stale { entries[key] = nil }
        entries.merge(made) { _, new in new }
        for key in Array(entries.keys) where span.contains(key) && !listed.contains(key) { entries[key] = nil }
    }

    /// Saves changes over the indexes as they are on disk now, in the order the queries found them:
    /// each collection's index read and written once, whatever the number of queries.
    /// - Returns: Why an index could not be saved (it is derived data: the caller only reports it).
    static func save(_ changes: [FieldIndexChanges], _ fileSystem: FileSystem) -> [FolioError] {
        var problems: [FolioError] = []
        for collection in Set(changes.map(\.collection)).sorted() {
            // Every column of the entries kept: read again whole (the queries read only their columns).
            var entries = FieldIndexFile.read(fileSystem, collection: collection, fields: nil).entries
            for change in changes where change.collection == collection { change.apply(to: &entries) }
            do {
                try FieldIndexFile.write(fileSystem, collection: collection, entries: entries)
            } catch {
                problems.append(error)
            }
        }
        return problems
    }
}
