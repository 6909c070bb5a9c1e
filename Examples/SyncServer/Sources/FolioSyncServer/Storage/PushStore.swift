/// One entity as a storage keeps it: its JSON object (nil once deleted: a tombstone, kept so the
/// feed can announce the deletion), its version, and its partition.
struct StoredEntity: Sendable, Equatable {
    /// The entity's JSON object, `id` included; nil for a tombstone.
    var fields: JSONObject?
    /// The change position of its last change (0 for an entity stored without one, by hand).
    var version: Int64
    /// Its day (todos), month (dailyStats) or `""` (tags).
    var partitionKey: String

    /// Whether it exists (is not a tombstone).
    var exists: Bool { fields != nil }
}

/// What one push transaction reads and writes, whatever the storage: the ``PushApplier`` holds
/// every rule of PROTOCOL.md and sees the storage only through this, so both storages answer a
/// push byte for byte alike.
///
/// Implementations see one owner's data only, inside one transaction of their storage.
protocol PushStore: AnyObject {
    /// The entity, its tombstone, or nil if the owner never had it.
    func entity(_ kind: CollectionKind, id: String) throws -> StoredEntity?
    /// Stores an entity (or its tombstone when `fields` is nil) under `kind` and `id`.
    func store(_ entity: StoredEntity, _ kind: CollectionKind, id: String) throws
    /// The todos of one day that exist (no tombstones).
    func todos(onDay day: String) throws -> [TodoDocument]
    /// The remembered response to a push, by its escaped `Idempotency-Key`.
    func rememberedResponse(forKey keyID: String) throws -> IdempotencyRecord?
    /// Remembers the response to a push (in the transaction of its change).
    func remember(_ record: IdempotencyRecord) throws
    /// The last change position given out to this owner (0 before the first change).
    func lastPosition() throws -> Int64
    /// Moves the last position given out.
    func setLastPosition(_ position: Int64) throws
}

extension CollectionKind {
    /// The day whose statistics an entity of this collection counts in: a todo's own day.
    func statisticsDay(of entity: StoredEntity) -> String? {
        self == .todos && entity.exists ? entity.partitionKey : nil
    }
}
