/// A ``PushStore`` over what a PostgreSQL transaction read before the pushes run: the entities
/// the pushes name, their idempotency records, and the todos and statistics of every day they
/// can touch. The ``PushApplier`` is synchronous; the database is not: so everything it may ask
/// for is read first, under the owner's lock, and its writes are collected here and written
/// afterwards in the same transaction.
///
/// Asking for something that was not read is a ``StorageError``, never an answer of "absent".
final class PrefetchedPushStore: PushStore {
    struct Key: Hashable {
        var kind: CollectionKind
        var id: String
    }

    /// Every entity read or written, nil for one known not to exist (never stored).
    private var entities: [Key: StoredEntity?] = [:]
    /// The ids of the existing todos of each day read.
    private var days: [String: Set<String>] = [:]
    private var records: [String: IdempotencyRecord?] = [:]
    private var position: Int64
    /// What the pushes wrote, in order, for the transaction to store.
    private(set) var written: [Key] = []
    private(set) var rememberedRecords: [IdempotencyRecord] = []
    private(set) var positionMoved = false

    init(position: Int64) {
        self.position = position
    }

    /// The last position, as the pushes moved it.
    var lastPositionValue: Int64 { position }

    // MARK: Filling

    /// Records what a read found: `found` by id, every other id of `ids` absent.
    func read(_ kind: CollectionKind, ids: some Sequence<String>, found: [String: StoredEntity]) {
        for id in ids { entities[Key(kind: kind, id: id)] = .some(found[id]) }
        for (id, entity) in found { entities[Key(kind: kind, id: id)] = .some(entity) }
    }

    /// Records the existing todos of a day.
    func readDay(_ day: String, todos: [String: StoredEntity]) {
        read(.todos, ids: [], found: todos)
        days[day] = Set(todos.keys)
    }

    /// Records the idempotency records of keys: `found` by key id, the other keys unused.
    func readKeys(_ keyIDs: some Sequence<String>, found: [String: IdempotencyRecord]) {
        for keyID in keyIDs { records[keyID] = .some(found[keyID]) }
    }

    /// The written entity of a key.
    func writtenEntity(_ key: Key) -> StoredEntity? { entities[key] ?? nil }

    // MARK: PushStore

    func entity(_ kind: CollectionKind, id: String) throws -> StoredEntity? {
        guard let known = entities[Key(kind: kind, id: id)] else {
            throw StorageError("internal: \(kind.rawValue)/\(id) was not read before the pushes ran")
        }
        return known
    }

    func store(_ entity: StoredEntity, _ kind: CollectionKind, id: String) throws {
        let key = Key(kind: kind, id: id)
        if kind == .todos {
            if let old = entities[key] ?? nil, old.exists { days[old.partitionKey]?.remove(id) }
            if entity.exists {
                guard days[entity.partitionKey] != nil else {
                    throw StorageError("internal: the todos of \(entity.partitionKey) were not read before the pushes ran")
                }
                days[entity.partitionKey]?.insert(id)
            }
        }
        entities[key] = .some(entity)
        if !written.contains(key) { written.append(key) }
    }

    func todos(onDay day: String) throws -> [TodoDocument] {
        guard let ids = days[day] else { throw StorageError("internal: the todos of \(day) were not read before the pushes ran") }
        return try ids.sorted().map { id in
            guard let entity = entities[Key(kind: .todos, id: id)] ?? nil, let fields = entity.fields else {
                throw StorageError("internal: the todo \(id) of \(day) was not read")
            }
            return TodoDocument(fields: fields, id: id, date: entity.partitionKey)
        }
    }

    func rememberedResponse(forKey keyID: String) throws -> IdempotencyRecord? {
        guard let known = records[keyID] else { throw StorageError("internal: the key \(keyID) was not read before the pushes ran") }
        return known
    }

    func remember(_ record: IdempotencyRecord) throws {
        records[record.id] = .some(record)
        rememberedRecords.append(record)
    }

    func lastPosition() throws -> Int64 { position }

    func setLastPosition(_ position: Int64) throws {
        self.position = position
        positionMoved = true
    }
}
