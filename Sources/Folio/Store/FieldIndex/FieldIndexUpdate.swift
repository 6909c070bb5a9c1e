/// What one query does with a collection's field index (``FieldIndexFile``): loads the columns it
/// filters on once, when it first filters files on fields, notes each file's outcome, and at the
/// end says what changed (``changes(scanned:)``), which ``FieldIndex`` keeps for the store to save
/// after the query.
struct FieldIndexUpdate {
    let collection: String
    /// Where the index is read from; nil when queries do not use it (``ScanAccelerators/index``).
    private let fileSystem: FileSystem?
    /// The entries with the query's columns, as loaded.
    private(set) var entries: [PartitionKey: FieldIndexFile.Record] = [:]
    /// The saved index holds no id twice (``FieldIndexFile/Contents/idsAreUnique``).
    private(set) var idsAreUnique = false
    /// Entries made by this query (every column), and keys whose entry went stale.
    private var made: [PartitionKey: FieldIndexFile.Record] = [:]
    private var stale: Set<PartitionKey> = []
    private(set) var isLoaded = false
    /// The columns ``load(fields:)`` left out, until ``loadOtherColumns()`` reads them.
    private var rest: FieldIndexFile.Rest?

    /// Made by ``FieldIndex/update(for:)``.
    init(collection: String, fileSystem: FileSystem?) {
        self.collection = collection
        self.fileSystem = fileSystem
    }

    /// Reads the saved index's columns `fields`, the first time only (never when the index is
    /// turned off).
    mutating func load(fields: Set<String>) {
        guard !isLoaded, let fileSystem else { return }
        isLoaded = true
        let contents = FieldIndexFile.read(fileSystem, collection: collection, fields: fields)
        (entries, idsAreUnique, rest) = (contents.entries, contents.idsAreUnique, contents.rest)
    }

    /// How many bytes of columns ``loadOtherColumns()`` would read (0 when none is left).
    var otherColumnsBytes: Int { rest?.bytes ?? 0 }

    /// Reads the columns ``load(fields:)`` left out, so the entries of files whose columns hold
    /// their entities whole hold every column (``FieldIndexFile/Record/holdsEntities``) and
    /// their matches are built from them. Nothing changes when one does not check out: those
    /// files' matches are then read from the files.
    mutating func loadOtherColumns() {
        guard let rest else { return }
        self.rest = nil
        guard let columns = FieldIndexFile.columns(rest) else { return }
        for index in entries.indices {
            entries.values[index].fields.merge(columns[entries.keys[index]] ?? [:]) { loaded, _ in loaded }
            entries.values[index].allColumns = true
        }
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
