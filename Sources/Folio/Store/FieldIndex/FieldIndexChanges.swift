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
