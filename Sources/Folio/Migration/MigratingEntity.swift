/// One stored entity as a migration sees it: its collection, partition, id and JSON fields.
///
/// A step changes it in place: rename, add or remove fields, or change `collection` or
/// `partition` to move it. The same step is applied to the `entity` and `base` of the outbox
/// commands still waiting to be sent, so they reach the server in the new shape (PROTOCOL.md,
/// "Schema versions").
public struct MigratingEntity: Sendable, Equatable {
    /// The entity's id (the key in its partition file).
    public let id: String
    /// Its collection; set it to move the entity to another collection.
    public var collection: String
    /// Its partition key: `YYYY-MM-DD` (day), `YYYY-MM` (month) or `""` (unpartitioned). Set it
    /// to move the entity; every entity of a collection must end with the same kind of key.
    public var partition: String
    /// The entity's JSON members.
    public var fields: [String: JSONValue]

    /// Creates an entity, for a custom step that adds one (``MigrationDatabase/upsert(_:)``).
    /// - Parameters:
    ///   - id: Its id.
    ///   - collection: Its collection.
    ///   - partition: Its partition key (`YYYY-MM-DD`, `YYYY-MM` or `""`).
    ///   - fields: Its JSON members.
    public init(id: String, collection: String, partition: String, fields: [String: JSONValue]) {
        self.id = id
        self.collection = collection
        self.partition = partition
        self.fields = fields
    }
}
