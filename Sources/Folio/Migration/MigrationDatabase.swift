/// The store's data while migrations run: every collection a step touches, in memory, as
/// ``MigratingEntity`` values. Custom steps (``MigrationStep/custom(commands:_:)``) read and
/// change it; nothing reaches the disk until every pending migration ran, and then all at once.
///
/// A collection is read whole the first time a step names it (with the journal's committed
/// changes), so a step over a 10-year day collection holds it in memory.
public final class MigrationDatabase {
    struct Stored {
        var partition: String
        var fields: [String: JSONValue]
        var version: String?
    }

    let engine: StoreEngine
    /// The current entities of each loaded collection, by id.
    private(set) var collections: [String: [String: Stored]] = [:]
    /// Each loaded collection as it was on disk: its partitions (with their other top-level
    /// members) and its entities.
    private(set) var originalPartitions: [String: [PartitionAddress: PartitionFile.Contents]] = [:]
    private(set) var originalEntities: [String: [String: Stored]] = [:]
    /// Server versions kept for locally deleted entities until their delete is acknowledged
    /// (tombstone versions), per collection: id → (partition, version). They follow the collection.
    private(set) var tombstones: [String: [String: (partition: String, version: String)]] = [:]
    /// The partition files of the collections the steps name, listed before they run when
    /// progress is reported (their number is its total); each collection's first load takes its
    /// list and counts its files as it reads them.
    private var unread: [String: [PartitionAddress]] = [:]
    private var reading: ProgressCounter?

    init(engine: StoreEngine) {
        self.engine = engine
    }

    /// Reports the reading of `collections` as ``FolioProgress/Phase/migrating``, file by file.
    /// A collection read without being named (by a custom step, or as an entity's new
    /// collection) is not counted.
    /// - Throws: ``FolioError`` for a name or a folder the step that names it would fail on.
    func reportReading(of collections: [String], to handler: @escaping ProgressHandler) throws(FolioError) {
        for collection in Set(collections) {
            try Names.validateCollection(collection)
            unread[collection] = try addresses(of: collection)
        }
        reading = ProgressCounter(.migrating, total: unread.values.reduce(0) { $0 + $1.count }, handler: handler)
    }

    /// Ends the reading's progress (every named collection was read once the steps ran).
    func finishReading() {
        reading?.finish()
    }

    /// The entities of a collection, by partition then id.
    /// - Parameter collection: The collection's name.
    /// - Returns: Its entities (none if it does not exist).
    /// - Throws: ``FolioError`` if one of its files cannot be read.
    public func entities(in collection: String) throws -> [MigratingEntity] {
        try load(collection).sorted { ($0.value.partition, $0.key) < ($1.value.partition, $1.key) }.map {
            MigratingEntity(id: $0.key, collection: collection, partition: $0.value.partition, fields: $0.value.fields)
        }
    }

    /// The entity with this id, or nil.
    /// - Parameters:
    ///   - id: Its id.
    ///   - collection: Its collection.
    /// - Returns: The entity.
    /// - Throws: ``FolioError`` if one of the collection's files cannot be read.
    public func entity(id: String, in collection: String) throws -> MigratingEntity? {
        guard let stored = try load(collection)[id] else { return nil }
        return MigratingEntity(id: id, collection: collection, partition: stored.partition, fields: stored.fields)
    }

    /// Adds an entity, or replaces the one with its id in its collection (keeping its server
    /// version).
    /// - Parameter entity: The entity.
    /// - Throws: ``FolioError`` for an invalid id or collection name.
    public func upsert(_ entity: MigratingEntity) throws {
        try Names.validateCollection(entity.collection)
        try Names.validateID(entity.id)
        let version = try load(entity.collection)[entity.id]?.version
        collections[entity.collection]![entity.id] = Stored(partition: entity.partition, fields: entity.fields, version: version)
    }

    /// Removes an entity.
    /// - Parameters:
    ///   - id: Its id.
    ///   - collection: Its collection.
    /// - Returns: Whether there was one.
    @discardableResult
    public func delete(id: String, from collection: String) throws -> Bool {
        try load(collection)
        return collections[collection]!.removeValue(forKey: id) != nil
    }

    // MARK: Steps

    func apply(_ step: MigrationStep) throws(FolioError) {
        switch step.kind {
        case .map(let collection, let map):
            for (id, stored) in try load(collection) {
                var entity = MigratingEntity(id: id, collection: collection, partition: stored.partition, fields: stored.fields)
                do { try map(&entity, engine.coder) } catch { throw Self.failure(error, step: step, id: id) }
                let changed = Stored(partition: entity.partition, fields: entity.fields, version: stored.version)
                if entity.collection == collection {
                    collections[collection]![id] = changed
                } else {
                    // The entity moves to another collection.
                    try Names.validateCollection(entity.collection)
                    collections[collection]![id] = nil
                    guard try load(entity.collection)[id] == nil else {
                        throw FolioError(
                            .migrationFailed, "moving \"\(id)\" to \(entity.collection): it already has an entity with that id", entityID: id)
                    }
                    collections[entity.collection]![id] = changed
                }
            }
        case .renameCollection(let from, let to):
            try Names.validateCollection(to)
            let entities = try load(from)
            guard try load(to).isEmpty else {
                throw FolioError(.migrationFailed, "cannot rename collection \(from) to \(to): \(to) already holds entities")
            }
            collections[from] = [:]
            collections[to] = entities
            tombstones[to] = tombstones[from]
            tombstones[from] = [:]
        case .custom(let body, _):
            do { try body(self) } catch { throw Self.failure(error, step: step, id: nil) }
        }
    }

    static func failure(_ error: any Error, step: MigrationStep, id: String?) -> FolioError {
        if let error = error as? FolioError, error.code == .migrationFailed { return error }
        let message = (error as? FolioError)?.message ?? "\(error)"
        return FolioError(.migrationFailed, "\(step.summary): \(message)", path: (error as? FolioError)?.path, entityID: id)
    }

    // MARK: Loading

    /// The collection's entities, read from the store the first time.
    @discardableResult
    func load(_ collection: String) throws(FolioError) -> [String: Stored] {
        if let loaded = collections[collection] { return loaded }
        try Names.validateCollection(collection)
        var partitions: [PartitionAddress: PartitionFile.Contents] = [:]
        var entities: [String: Stored] = [:]
        let listed = unread.removeValue(forKey: collection)
        let addresses = if let listed { listed } else { try self.addresses(of: collection) }
        for address in addresses {
            let partition = try engine.partition(address)
            if let problem = partition.unreadable { throw problem }
            partitions[address] = partition.contents
            for (id, json) in partition.entities {
                guard let fields = json.objectValue else {
                    throw FolioError(.corruptFile, "entity \"\(id)\" is not a JSON object", path: address.path, entityID: id)
                }
                guard entities[id] == nil else {
                    throw FolioError(
                        .corruptFile,
                        "entity \"\(id)\" is in two partitions (\(entities[id]!.partition) and \(address.key.text)); fix the store before migrating",
                        path: address.path, entityID: id)
                }
                entities[id] = Stored(partition: address.key.text, fields: fields, version: partition.versions[id])
            }
            for (id, version) in partition.versions where partition.entities[id] == nil {
                tombstones[collection, default: [:]][id] = (address.key.text, version)
            }
            if listed != nil { reading?.advance() }
        }
        collections[collection] = entities
        originalPartitions[collection] = partitions
        originalEntities[collection] = entities
        return entities
    }

    /// The partition files of a collection (none if it has no files).
    private func addresses(of collection: String) throws(FolioError) -> [PartitionAddress] {
        guard let granularity = try granularity(of: collection) else { return [] }
        return try engine.addresses(collection: collection, granularity: granularity, selection: .all)
    }

    /// How a collection is stored now, from its files (or its journal records); nil if it has none.
    private func granularity(of collection: String) throws(FolioError) -> PartitionGranularity? {
        if let touched = engine.touched.first(where: { $0.collection == collection }) { return touched.granularity }
        if try engine.fileSystem.identity(collection + ".json") != nil { return PartitionGranularity.none }
        for entry in try engine.fileSystem.list(collection) {
            if entry.isDirectory, DataFileName.isMonthFolder(entry.name) { return .day }
            if !entry.isDirectory, DataFileName.month(fileName: entry.name) != nil { return .month }
        }
        return nil
    }
}
