import Folio

/// A ``PushStore`` over one Folio transaction: entities as documents of their collection, their
/// versions as ``VersionRecord``s beside them, the last position in ``ChangeCounter``.
final class FolderPushStore: PushStore {
    private let transaction: Transaction

    init(_ transaction: Transaction) {
        self.transaction = transaction
    }

    func entity(_ kind: CollectionKind, id: String) throws -> StoredEntity? {
        switch kind {
        case .todos: try Self.entity(TodoDocument.self, id: id, in: transaction)
        case .tags: try Self.entity(TagDocument.self, id: id, in: transaction)
        case .dailyStats: try Self.entity(DailyStatDocument.self, id: id, in: transaction)
        }
    }

    func store(_ entity: StoredEntity, _ kind: CollectionKind, id: String) throws {
        switch kind {
        case .todos: try Self.store(entity, TodoDocument.self, id: id, in: transaction)
        case .tags: try Self.store(entity, TagDocument.self, id: id, in: transaction)
        case .dailyStats: try Self.store(entity, DailyStatDocument.self, id: id, in: transaction)
        }
    }

    func todos(onDay day: String) throws -> [TodoDocument] {
        try transaction.fetch(Query<TodoDocument>(.day(day)))
    }

    func rememberedResponse(forKey keyID: String) throws -> IdempotencyRecord? {
        try transaction.get(IdempotencyRecord.self, id: keyID)
    }

    func remember(_ record: IdempotencyRecord) throws {
        try transaction.upsert(record)
    }

    func lastPosition() throws -> Int64 {
        try transaction.get(ChangeCounter.self, id: ChangeCounter.entityID)?.value ?? 0
    }

    func setLastPosition(_ position: Int64) throws {
        try transaction.upsert(ChangeCounter(value: position))
    }

    // MARK: Documents and their versions

    /// A document with its version (0 when it has none: stored by hand), or its tombstone.
    static func entity<D: ServerDocument>(_ type: D.Type, id: String, in transaction: Transaction) throws -> StoredEntity? {
        let record = try transaction.get(D.Version.self, id: id)
        if let document = try transaction.get(D.self, id: id) {
            let version = record.map { $0.deleted ? 0 : $0.sequence } ?? 0
            return StoredEntity(fields: document.fields, version: version, partitionKey: document.partitionKey)
        }
        guard let record, record.deleted else { return nil }
        return StoredEntity(fields: nil, version: record.sequence, partitionKey: record.partitionKey)
    }

    private static func store<D: ServerDocument>(_ entity: StoredEntity, _ type: D.Type, id: String, in transaction: Transaction) throws {
        if let fields = entity.fields {
            try transaction.upsert(D(fields: fields, id: id, partitionKey: entity.partitionKey))
        } else {
            try transaction.delete(D.self, id: id)
        }
        try transaction.upsert(D.Version(id: id, partitionKey: entity.partitionKey, sequence: entity.version, deleted: !entity.exists))
    }
}
