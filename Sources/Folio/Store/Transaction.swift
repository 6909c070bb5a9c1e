/// The changes of one ``Store/write(_:)`` block, applied all together or not at all.
///
/// Changes are staged in memory while the block runs; reads through the transaction see them.
/// When the block returns, they are committed as one journal record; when it throws, they are
/// dropped and the store is unchanged.
///
/// ## Topics
/// - ``upsert(_:)``
/// - ``delete(_:id:)``
/// - ``deleteAll(_:)``
/// - ``get(_:id:)``
/// - ``fetch(_:)``
public final class Transaction {
    private let engine: StoreEngine
    /// Staged changes: per partition, per id, the new JSON (nil: removed).
    var staged: [PartitionAddress: [String: JSONValue?]] = [:]
    /// Where staged ids live now (nil: deleted), per collection.
    private var locations: [String: [String: PartitionKey?]] = [:]
    /// The entities staged, in the order the block first touched them: the order of their outbox
    /// commands (a parent created before its child is sent before it).
    var stagingOrder: [(collection: String, id: String)] = []
    /// The partitions where each staged id (`collection/id`) is staged as removed: where a move
    /// takes it from (``versionMoving(_:collection:into:)`` looks there, not in every partition).
    private var removals: [String: Set<PartitionAddress>] = [:]
    /// App-defined commands to enqueue with this transaction.
    var customCommands: [CustomCommand] = []
    /// Set by the sync engine: the changes are the server's, so they enqueue no commands.
    var isFromServer = false
    /// Server versions learnt in this transaction, per partition and id (sync engine only).
    var stagedVersions: [PartitionAddress: [String: String]] = [:]
    /// Versions changed without changing the entity (sync engine only), per partition and id:
    /// a version, or nil when the server no longer has the entity (an acknowledged delete).
    var versionOnly: [PartitionAddress: [String: String?]] = [:]
    /// Outbox changes the sync engine makes with the entity changes (acknowledgements…).
    var outboxChanges: [JournalRecord.OutboxChange] = []

    struct CustomCommand {
        var name: String
        var payload: JSONValue
        var collection: String?
        var entityID: String?
    }

    init(engine: StoreEngine) {
        self.engine = engine
    }

    /// Whether the block staged anything (entities or custom commands).
    var hasStaged: Bool { !staged.isEmpty || !customCommands.isEmpty }

    /// Inserts the entity, or replaces the stored entity with the same id.
    ///
    /// If the entity's partition changed (a todo moved to another day), it is removed from its
    /// old file and added to the new one, in this transaction. Fields of the stored JSON that
    /// `E` does not know are kept; if the stored JSON does not decode as `E` (an old shape), every
    /// stored field the new value does not set is kept.
    /// - Parameter entity: The entity to store.
    /// - Throws: ``FolioError`` with ``FolioError/Code/invalidName`` for a bad id or partition
    ///   key, ``FolioError/Code/corruptFile`` if a file involved cannot be read.
    public func upsert<E: Entity>(_ entity: E) throws {
        let granularity = try engine.register(E.self)
        let id = entity.id.storageKey
        try Names.validateID(id)
        let key: PartitionKey
        do { key = PartitionKey(text: try E.partitioning.key(entity)) } catch { throw error.withEntity(id) }
        let target = PartitionAddress(collection: E.collection, granularity: granularity, key: key)
        var json = try engine.coder.encode(entity)
        try Limits.checkEntity(json, id: id, code: .encodingFailed)
        if let current = try address(of: id, collection: E.collection, granularity: granularity) {
            if let stored = try self.json(at: current, id: id), !UnknownFields.covers(json, stored) {
                // A stored entity that no longer decodes as `E` has no known fields to tell
                // unknown ones from: every stored field the new value does not set is kept.
                let known = engine.coder.roundTrip(E.self, stored) ?? .object([:])
                json = UnknownFields.merge(stored: stored, known: known, new: json)
            }
            if current != target { stage(current, id: id, entity: nil) }
        }
        stage(target, id: id, entity: json)
    }

    /// Deletes the entity with this id, wherever it is.
    /// - Parameters:
    ///   - type: The entity type.
    ///   - id: The id of the entity to delete.
    /// - Returns: Whether there was such an entity.
    /// - Throws: ``FolioError`` if a file involved cannot be read.
    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) throws -> Bool {
        let granularity = try engine.register(E.self)
        let key = id.storageKey
        try Names.validateID(key)
        // A delete must not miss an entity a file brought in while the store was open.
        guard let current = try address(of: key, collection: E.collection, granularity: granularity, verifyingAbsence: true) else { return false }
        stage(current, id: key, entity: nil)
        return true
    }

    /// Deletes every entity a query selects (its predicate, and its offset and limit if any).
    /// - Parameter query: Selects the entities to delete.
    /// - Returns: How many entities were deleted.
    @discardableResult
    public func deleteAll<E: Entity>(_ query: Query<E>) throws -> Int {
        let doomed = try fetch(query)
        for entity in doomed { try delete(E.self, id: entity.id) }
        return doomed.count
    }

    /// The entity with this id, as this transaction sees it (its own changes included).
    /// - Returns: The entity, or nil if there is none.
    public func get<E: Entity>(_ type: E.Type, id: E.ID) throws -> E? {
        let granularity = try engine.register(E.self)
        let key = id.storageKey
        try Names.validateID(key)
        guard let address = try address(of: key, collection: E.collection, granularity: granularity, verifyingAbsence: true),
            let json = try self.json(at: address, id: key)
        else { return nil }
        return try engine.coder.decode(E.self, from: json, id: key, path: address.path)
    }

    /// The entities a query selects, as this transaction sees them (its own changes included).
    public func fetch<E: Entity>(_ query: Query<E>) throws -> [E] {
        try engine.fetch(query, overlay: self)
    }

    /// Enqueues an app-defined command in the outbox, in this transaction: it is committed with
    /// the transaction's other changes or not at all, and sent in order with the others.
    ///
    /// Changes to entities of ``SyncMode/push`` collections enqueue their commands by themselves;
    /// use this for what is not an entity change (e.g. "mark all done", "send invite").
    /// - Parameters:
    ///   - name: The command's name, for the transport to map to a request (1–128 bytes).
    ///   - payload: Its parameters; encoded like an entity.
    /// - Throws: ``FolioError`` if the payload cannot be encoded or the name is invalid.
    public func enqueue<P: Encodable & Sendable>(_ name: String, payload: P) throws {
        try enqueueCustom(name, payload: payload, collection: nil, entityID: nil)
    }

    /// Enqueues an app-defined command that concerns one entity: it then counts among that
    /// entity's pending changes. See ``enqueue(_:payload:)``.
    /// - Parameters:
    ///   - name: The command's name.
    ///   - payload: Its parameters.
    ///   - type: The type of the entity it concerns.
    ///   - id: The id of that entity.
    public func enqueue<P: Encodable & Sendable, E: Entity>(_ name: String, payload: P, about type: E.Type, id: E.ID) throws {
        try engine.register(type)
        try Names.validateID(id.storageKey)
        try enqueueCustom(name, payload: payload, collection: E.collection, entityID: id.storageKey)
    }

    private func enqueueCustom<P: Encodable>(_ name: String, payload: P, collection: String?, entityID: String?) throws(FolioError) {
        guard !name.isEmpty, name.utf8.count <= 128 else {
            throw FolioError(.invalidName, "a custom command's name must be 1–128 bytes")
        }
        let json = try engine.coder.encodeValue(payload)
        try Limits.checkEntity(json, id: "payload of \(name)", code: .encodingFailed)
        customCommands.append(CustomCommand(name: name, payload: json, collection: collection, entityID: entityID))
    }

    // MARK: Staging

    /// Stages the server's value of an entity (nil: deleted) with its version, wherever it lives
    /// now and wherever it must go. For the sync engine.
    func stageServerValue(
        _ entity: JSONValue?, at target: PartitionAddress?, collection: String,
        granularity: PartitionGranularity, id: String, version: String?
    ) throws(FolioError) {
        let current = try address(of: id, collection: collection, granularity: granularity)
        if let current, current != target { stage(current, id: id, entity: nil) }
        if let target, let entity {
            try Limits.checkEntity(entity, id: id, code: .badResponse)
            stage(target, id: id, entity: entity)
            if let version { stagedVersions[target, default: [:]][id] = version }
        }
    }

    /// Records a version for an entity whose JSON stays as it is.
    func stageVersion(_ version: String, at address: PartitionAddress, id: String) throws(FolioError) {
        guard let entity = try json(at: address, id: id) else { return }
        stage(address, id: id, entity: entity)
        stagedVersions[address, default: [:]][id] = version
    }

    /// Records what the server has of an entity, whatever its local state: `version`, or nothing
    /// (nil: the server deleted it). A locally deleted entity keeps the version the server still
    /// has (a tombstone version) until its delete is acknowledged.
    func stageServerVersion(_ version: String?, at address: PartitionAddress, id: String) {
        versionOnly[address, default: [:]][id] = .some(version)
    }

    /// Whether this transaction deletes the entity (rather than leaving it or moving it).
    func deletes(_ id: String, collection: String) -> Bool {
        if case .some(nil) = locations[collection]?[id] { return true }
        return false
    }

    /// The server version of an entity this transaction moves into `target`: the version of the
    /// partition it leaves, so the next command of the entity is made on it.
    func versionMoving(_ id: String, collection: String, into target: PartitionAddress) throws(FolioError) -> String? {
        guard !removals.isEmpty else { return nil }   // nothing removed, nothing moved (a new entity)
        for address in removals[collection + "/" + id] ?? [] where address != target {
            if let version = try engine.partition(address, verify: false).versions[id] { return version }
        }
        return nil
    }

    private func stage(_ address: PartitionAddress, id: String, entity: JSONValue?) {
        staged[address, default: [:]][id] = .some(entity)
        if entity == nil {
            removals[address.collection + "/" + id, default: []].insert(address)
        } else if !removals.isEmpty {
            removals[address.collection + "/" + id]?.remove(address)
        }
        // An upsert that moves an entity stages the removal first, so the last stage says where
        // the entity is now. Every staged entity has a location: one that had none is staged
        // for the first time, which fixes its place in the staging order.
        let previous = locations[address.collection, default: [:]].updateValue(entity == nil ? nil : address.key, forKey: id)
        if previous == nil { stagingOrder.append((address.collection, id)) }
    }

    /// Where an entity lives, as this transaction sees it.
    func address(
        of id: String, collection: String, granularity: PartitionGranularity,
        verifyingAbsence: Bool = false
    ) throws(FolioError) -> PartitionAddress? {
        if let staged = locations[collection]?[id] {
            return staged.map { PartitionAddress(collection: collection, granularity: granularity, key: $0) }
        }
        return try engine.locate(collection: collection, granularity: granularity, id: id, verifyingAbsence: verifyingAbsence)
    }

    /// An entity's JSON, as this transaction sees it.
    func json(at address: PartitionAddress, id: String) throws(FolioError) -> JSONValue? {
        if let change = staged[address]?[id] { return change }
        return try engine.partition(address, verify: false).entities[id]
    }
}

extension FolioError {
    func withEntity(_ id: String) -> FolioError {
        FolioError(code, message, path: path, line: line, column: column, entityID: entityID ?? id, systemError: systemError)
    }
}

/// What the sync engine and the outbox API need of the store inside a transaction, so that they
/// never reach the store's state itself.
extension Transaction {
    /// The store's entity coder.
    var coder: EntityCoder { engine.coder }

    /// Registers an entity type with the store (its collection and partitioning).
    func register<E: Entity>(_ type: E.Type) throws(FolioError) {
        _ = try engine.register(type)
    }

    /// The partitioning of a collection this process registered, or nil.
    func registeredGranularity(of collection: String) -> PartitionGranularity? { engine.collections[collection] }

    /// A partition as committed (the transaction's staged changes not applied).
    func storedPartition(_ address: PartitionAddress) throws(FolioError) -> Partition {
        try engine.partition(address, verify: false)
    }
}
