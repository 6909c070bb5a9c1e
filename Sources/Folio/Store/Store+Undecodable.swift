extension Store {
    /// The stored entities of a type that do not decode as it (an old shape the app's models no
    /// longer match, or a hand edit), each with its file, line, column and field.
    ///
    /// Queries, fetches and observations skip these entities and serve the others; ``get(_:id:)``
    /// of one of them throws its ``UndecodableEntity/error``. Migrate them
    /// (``Migrator``, docs/ChangingModels.md) or fix them by hand.
    /// - Parameters:
    ///   - type: The entity type to decode as.
    ///   - selection: The partitions to check (default: all of them).
    /// - Returns: The entities that do not decode, by path and id.
    /// - Throws: ``FolioError`` if a selected file cannot be read, or for a selection the
    ///   collection does not support.
    public func undecodableEntities<E: Entity>(_ type: E.Type, in selection: PartitionSelection = .all) async throws -> [UndecodableEntity] {
        try await read { engine throws(FolioError) in try engine.undecodableEntities(E.self, in: selection) }
    }
}
