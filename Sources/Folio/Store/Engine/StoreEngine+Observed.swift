/// What observed queries and sync statuses ask of the engine (Observation/Store+Observe.swift,
/// Store+SyncStatus.swift).
extension StoreEngine {
    /// The entities as stored JSON: what an observed query compares to tell whether its result changed.
    func fingerprint<E: Entity>(of entities: [E]) throws(FolioError) -> [JSONValue] {
        var values: [JSONValue] = []
        values.reserveCapacity(entities.count)
        for entity in entities { values.append(try coder.encode(entity)) }
        return values
    }
}

extension StoreEngine {
    /// Each entity with its sync status, from the outbox.
    func withSyncStatus<E: Entity>(_ entities: [E]) throws(FolioError) -> [WithSyncStatus<E>] {
        let statuses = try syncStatuses(collection: E.collection, ids: entities.map(\.id.storageKey))
        return entities.map { WithSyncStatus(entity: $0, syncStatus: statuses[$0.id.storageKey] ?? .synced) }
    }
}
