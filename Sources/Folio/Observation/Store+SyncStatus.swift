/// Per-entity sync status.
extension Store {
    /// Where one entity stands with the server.
    /// - Parameters:
    ///   - type: The entity type.
    ///   - id: The entity's id.
    /// - Returns: ``EntitySyncStatus/synced``, ``EntitySyncStatus/pending(commands:)`` or
    ///   ``EntitySyncStatus/failed(sequence:reason:status:)``.
    /// - Throws: ``FolioError`` if the outbox cannot be read.
    public func syncStatus<E: Entity>(of type: E.Type, id: E.ID) async throws -> EntitySyncStatus {
        let key = id.storageKey
        return try await read { engine throws(FolioError) in
            try engine.syncStatuses(collection: E.collection, ids: [key])[key] ?? .synced
        }
    }

    /// The entities with their sync status, read together (one consistent state).
    /// - Parameter entities: Entities, e.g. a query's result.
    /// - Returns: Each entity with its status, in the same order.
    /// - Throws: ``FolioError`` if the outbox cannot be read.
    public func withSyncStatus<E: Entity>(_ entities: [E]) async throws -> [WithSyncStatus<E>] {
        try await read { engine throws(FolioError) in try engine.withSyncStatus(entities) }
    }
}
