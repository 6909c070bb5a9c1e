/// Typed reads.
extension StoreState {
    func get<E: Entity>(_ type: E.Type, id: E.ID) throws(FolioError) -> E? {
        let granularity = try register(E.self)
        let key = id.storageKey
        try Names.validateID(key)
        guard let address = try locate(collection: E.collection, granularity: granularity, id: key, strict: true) else { return nil }
        let partition = try partition(address, verify: false)
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
                $0.collection == E.collection && !present.contains($0) && addressMatches($0, query.selection)
            }
            if !extra.isEmpty { addresses = (addresses + extra).sorted() }
        }
        var result: [E] = []
        var loaded: [Partition] = []
        for address in addresses { loaded.append(try partition(address)) }
        let twice = duplicateIDs(among: loaded)
        for partition in loaded {
            if let changes = overlay?.staged[partition.address], !changes.isEmpty {
                var entities = partition.entities
                for (id, entity) in changes { entities[id] = entity }
                for id in entities.keys.sorted(by: { $0.precedesInKeyOrder($1) }) {
                    // An entity that does not decode is skipped, as in a plain read.
                    if case .success(let value) = coder.decodeOne(E.self, from: entities[id]!),
                       Partition.keyMismatch(id: id, in: entities[id]!, path: partition.address.path) == nil { result.append(value) }
                }
            } else {
                result.append(contentsOf: partition.values(E.self, coder: coder) { reportUndecodable(E.self, in: partition, error: $0) })
            }
        }
        if !twice.isEmpty { result.removeAll { twice.contains($0.id.storageKey) } }
        return try query.refine(result)
    }

    private func addressMatches(_ address: PartitionAddress, _ selection: PartitionSelection) -> Bool {
        selection.contains(partitionKey: address.key.text)
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
