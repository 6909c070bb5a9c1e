/// The saved id index (``IndexFile``, `.folio/index/<collection>`): building a collection's id
/// index from it and the files, and saving it.
extension IdLocator {
    /// Builds the id index of a partitioned collection: from `.folio/index/` where the files are
    /// unchanged, by reading the partition files elsewhere.
    func buildIndex(collection: String, granularity: PartitionGranularity) throws(FolioError) {
        let saved: (bytes: [UInt8], lines: [PartitionKey: (FileIdentity, [Range<Int>])])
        do {
            saved = try IndexFile.entries(fileSystem, collection: collection)
        } catch {
            report(
                .warning, "could not read the saved id index (every file of \(collection) is read instead): \(error.message)", path: IndexFile.path(collection))
            saved = ([], [:])
        }
        // Identities are filled as partitions leave memory during the build too (``noteEvicted(_:)``).
        idIndex.beginBuilding(collection)
        // Only files whose entry can hold are `stat`ed, on several threads (as the look-up's).
        let addresses = try source.addresses(collection: collection, granularity: granularity, selection: .all)
        let candidates = addresses.filter { saved.lines[$0.key] != nil && source.memoryIsFile($0) }
        let fileSystem = fileSystem
        let identities = parallelMap(candidates, width: StoreEngine.scanWidth) { address in
            Result { () throws(FolioError) -> FileIdentity? in try fileSystem.identity(address.path) }
        }
        // The entries whose files are unchanged are taken as the file lists them (``SavedIDTable``);
        // the other files are read, and an id listed in two entries goes through `index(_:in:)`,
        // which checks both files.
        var unchanged: [(key: PartitionKey, ids: [Range<Int>])] = []
        var unchangedKeys: Set<PartitionKey> = []
        for (address, identity) in zip(candidates, identities) {
            guard let (listed, ids) = saved.lines[address.key], try identity.get() == listed else { continue }
            idIndex.remember(listed, of: address.key, in: collection)
            unchangedKeys.insert(address.key)
            unchanged.append((address.key, ids))
        }
        let built = unchanged.isEmpty ? nil : SavedIDTable.build(bytes: saved.bytes, entries: unchanged)
        idIndex.setBuilt(collection, from: built?.table, twice: built?.twice ?? [:], identities: saved.lines.mapValues(\.0))
        if built == nil { unchangedKeys = [] }
        for (id, keys) in built?.twice ?? [:] {
            for key in keys { index(id, in: PartitionAddress(collection: collection, granularity: granularity, key: key)) }
        }
        let toRead = addresses.filter { !unchangedKeys.contains($0.key) }
        for address in toRead { indexPartition(address) }
        if !toRead.isEmpty || saved.lines.count != unchangedKeys.count { idIndex.markChanged(collection) }
    }

    /// Saves the id indexes that changed since they were read (after a checkpoint, when the files
    /// hold everything). Failures are only reported: the index is derived data.
    /// - Parameter granularities: The collections registered by this process, with their partitioning.
    func saveIndexes(granularities: [String: PartitionGranularity]) {
        for collection in idIndex.changed.sorted() {
            guard idIndex.isSavable(collection), let ids = idIndex.idsByPartition(in: collection),
                let granularity = granularities[collection] ?? ids.keys.first.map({ $0.text.count == 7 ? .month : .day })
            else { continue }
            // Only the partitions whose ids changed since the last save are gathered and sorted
            // again; the others are written as the last save (or the file read) had them.
            let changedKeys = idIndex.changedPartitions(in: collection)
            var entries: [PartitionKey: (identity: FileIdentity, ids: IndexFile.IDs)] = [:]
            var written: [PartitionKey: [String]] = [:]
            entries.reserveCapacity(ids.count)
            for (key, ids) in ids {
                let address = PartitionAddress(collection: collection, granularity: granularity, key: key)
                guard let identity = source.identityInMemory(of: address) ?? idIndex.identity(of: key, in: collection) else { break }
                if case .listed(let listed) = ids, changedKeys.contains(key) {
                    written[key] = IndexFile.sortedInKeyOrder(listed)
                    entries[key] = (identity, .listed(written[key]!))
                } else {
                    entries[key] = (identity, ids)
                }
            }
            guard entries.count == ids.count else { continue }
            // Left for a later checkpoint while few entries are out of date: a look-up reads
            // their files (IndexFile.lookUp), where writing the index again costs all its ids.
            let listed = idIndex.savedIdentities[collection] ?? [:]
            let outOfDate =
                changedKeys.count + entries.count { !changedKeys.contains($0.key) && listed[$0.key] != $0.value.identity }
                + listed.keys.count { entries[$0] == nil && !changedKeys.contains($0) }
            let files = Set(entries.keys).union(listed.keys).count
            if outOfDate <= IndexFile.staleEntriesTolerated(files: files), !listed.isEmpty { continue }
            do {
                try IndexFile.write(fileSystem, collection: collection, entries: entries)
                idIndex.markSaved(collection, changedPartitions: written, identities: entries.mapValues(\.identity))
            } catch {
                report(.warning, "could not save the id index (it is rebuilt when needed): \(error.message)", path: IndexFile.path(collection))
            }
        }
    }
}
