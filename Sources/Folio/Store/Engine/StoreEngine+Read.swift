/// Typed reads.
extension StoreEngine {
    func get<E: Entity>(_ type: E.Type, id: E.ID) throws(FolioError) -> E? {
        let granularity = try register(E.self)
        let key = id.storageKey
        try Names.validateID(key)
        guard let address = try locator.locate(collection: E.collection, granularity: granularity, id: key, strict: true, verifyingAbsence: true) else {
            return nil
        }
        let partition = try partition(address, verify: false)
        defer { partitions.recharge(partition) }
        do { return try partition.value(E.self, id: key, coder: coder) } catch {
            throw undecodable(E.self, in: partition, id: key)?.error ?? error
        }
    }

    /// The query's result; with `overlay`, as a transaction with staged changes sees it.
    func fetch<E: Entity>(_ query: Query<E>, overlay: Transaction? = nil) throws(FolioError) -> [E] {
        let granularity = try register(E.self)
        var addresses = try self.addresses(collection: E.collection, granularity: granularity, selection: query.selection)
        if let overlay {
            let present = Set(addresses)
            let extra = overlay.staged.keys.filter {
                $0.collection == E.collection && !present.contains($0) && query.selection.contains(partitionKey: $0.key.text)
            }
            if !extra.isEmpty { addresses = (addresses + extra).sorted() }
        }
        if readPass.putsOffFileLoads, addresses.contains(where: { !partitions.contains($0) }) {
            // Loading a file makes this read run again under the shared lock (Store.read): load
            // it there, and read the partitions once, not twice.
            putOffFileLoad()
            return []
        }
        var result: [E] = []
        var scan = DuplicateScan(collection: E.collection, indexed: locator.isBuilt(E.collection), partitions: addresses.count)
        let filter = try fieldFilter(query.predicate, over: addresses)
        let scannable = { (address: PartitionAddress) in
            !self.feed.isTracking && !self.touched.contains(address) && !self.handEdits.waits(at: address)
                && overlay?.staged[address] == nil
        }
        try forEachPartition(addresses, decoding: E.self, matching: query.predicate, filter: filter, scannable: scannable) { item throws(FolioError) in
            let partition: Partition, matches: [E]?
            switch item {
            case .scanned(let address, let ids, let scanned, let vouched):
                // An id the index places elsewhere (another process wrote the file since): the
                // load updates the index and finds an id in two files, as a read would.
                if let index = locator.locations(in: E.collection), ids.all.contains(where: { index.key(of: $0) != address.key }) {
                    locator.indexPartition(address)
                }
                scan.note(address, ids: ids, vouched: vouched)
                notePartitionScanned()
                result.append(contentsOf: scanned)
                return
            case .loaded(let loaded, let decoded, let vouched):
                (partition, matches) = (loaded, decoded)
                scan.note(partition.address, ids: ScannedIDs(Array(partition.entities.keys)), vouched: vouched)
            }
            var values: [E] = []
            let changes = overlay?.staged[partition.address] ?? [:]
            if changes.isEmpty, let matches {
                // Decoded and filtered while the file was fetched.
                partitions.recharge(partition)
                result.append(contentsOf: matches)
                return
            }
            if !changes.isEmpty {
                var entities = partition.entities
                for (id, entity) in changes { entities[id] = entity }
                for id in entities.keys.sorted(by: { $0.precedesInKeyOrder($1) }) {
                    // An entity that does not decode is skipped, as in a plain read.
                    if case .success(let value) = coder.decodeOne(E.self, from: entities[id]!),
                        Partition.keyMismatch(id: id, in: entities[id]!, path: partition.address.path) == nil
                    {
                        values.append(value)
                    }
                }
            } else {
                values = partition.values(E.self, coder: coder) { reportUndecodable(E.self, in: partition, error: $0) }
                partitions.recharge(partition)
            }
            // Only what matches is kept: the partition's decoded values go with it.
            result.append(contentsOf: try query.matching(values))
        }
        scan.finish()
        let twice = locator.duplicateIDs(scan)
        if !twice.isEmpty { result.removeAll { twice.contains($0.id.storageKey) } }
        return query.ordered(result)
    }
}

extension PartitionSelection {
    /// Whether the partition with this key ("YYYY-MM-DD", "YYYY-MM", or "" when unpartitioned)
    /// is selected.
    func contains(partitionKey key: String) -> Bool {
        switch self {
        case .all: return true
        case .day(let day): return key == day
        case .days(let from, let through): return key >= from && key <= through
        case .month(let month): return key.hasPrefix(month)
        case .months(let from, let through): return String(key.prefix(7)) >= from && String(key.prefix(7)) <= through
        }
    }
}
