/// The saved id index (``IndexFile``, `.folio/index/<collection>`): building a collection's id
/// index from it and the files, and saving it.
extension IdLocator {
    /// Builds the id index of a partitioned collection: from `.folio/index/` where the files are
    /// unchanged, by reading the partition files elsewhere.
    func buildIndex(collection: String, granularity: PartitionGranularity) throws(FolioError) {
        let persisted = IndexFile.read(fileSystem, collection: collection)
        // Identities are filled as partitions leave memory during the build too (``noteEvicted(_:)``).
        idIndex.beginBuilding(collection)
        var persistedCount = 0
        var stale = false
        // The entries whose files are unchanged go in first, into one dictionary sized at once
        // (years of ids, added one by one through `index(_:in:)`, cost more than reading them);
        // an id met twice goes through `index(_:in:)`, which checks both files.
        var fromEntries = [String: PartitionKey](minimumCapacity: persisted.values.reduce(0) { $0 + $1.ids.count })
        var twice: [(id: String, address: PartitionAddress)] = []
        var saved: [PartitionKey: [String]] = [:]
        var toRead: [PartitionAddress] = []
        // Only files whose entry can hold are `stat`ed, on several threads (as the look-up's).
        let addresses = try source.addresses(collection: collection, granularity: granularity, selection: .all)
        let candidates = addresses.filter { persisted[$0.key] != nil && source.memoryIsFile($0) }
        let fileSystem = fileSystem
        let identities = parallelMap(candidates, width: StoreEngine.scanWidth) { address in
            Result { () throws(FolioError) -> FileIdentity? in try fileSystem.identity(address.path) }
        }
        var current: [PartitionKey: FileIdentity] = [:]
        current.reserveCapacity(candidates.count)
        for (address, identity) in zip(candidates, identities) { current[address.key] = try identity.get() }
        for address in addresses {
            if let entry = persisted[address.key], let identity = current[address.key], identity == entry.identity {
                for id in entry.ids {
                    guard let other = fromEntries.updateValue(address.key, forKey: id) else { continue }
                    twice.append((id, PartitionAddress(collection: collection, granularity: granularity, key: other)))
                    twice.append((id, address))
                }
                idIndex.remember(entry.identity, of: address.key, in: collection)
                saved[address.key] = entry.ids
                persistedCount += 1
            } else {
                toRead.append(address)
            }
        }
        for (id, _) in twice { fromEntries[id] = nil }
        idIndex.setLocations(consume fromEntries, saved: saved, changedKeys: twice.map(\.address.key), of: collection)   // not copied by the first change
        for (id, address) in twice { index(id, in: address) }
        for address in toRead {
            stale = true
            indexPartition(address)
        }
        if stale || persisted.count != persistedCount { idIndex.markChanged(collection) }
    }

    /// Saves the id indexes that changed since they were read (after a checkpoint, when the files
    /// hold everything). Failures are only reported: the index is derived data.
    /// - Parameter granularities: The collections registered by this process, with their partitioning.
    func saveIndexes(granularities: [String: PartitionGranularity]) {
        for collection in idIndex.changed.sorted() {
            guard idIndex.isSavable(collection), let (ids, changedKeys) = idIndex.idsByPartition(in: collection),
                let granularity = granularities[collection] ?? ids.keys.first.map({ $0.text.count == 7 ? .month : .day })
            else { continue }
            // Only the partitions whose ids changed since the last save are sorted again; the
            // others keep the order the file had.
            var entries: [PartitionKey: IndexFile.Entry] = [:]
            entries.reserveCapacity(ids.count)
            for (key, ids) in ids {
                let address = PartitionAddress(collection: collection, granularity: granularity, key: key)
                guard let identity = source.identityInMemory(of: address) ?? idIndex.identity(of: key, in: collection) else { break }
                entries[key] = IndexFile.Entry(identity: identity, ids: changedKeys.contains(key) ? IndexFile.sortedInKeyOrder(ids) : ids)
            }
            guard entries.count == ids.count else { continue }
            do {
                try IndexFile.write(fileSystem, collection: collection, entries: entries)
                idIndex.markSaved(collection, ids: entries.mapValues(\.ids))
            } catch {
                report(.warning, "could not save the id index (it is rebuilt when needed): \(error.message)", path: IndexFile.path(collection))
            }
        }
    }
}
