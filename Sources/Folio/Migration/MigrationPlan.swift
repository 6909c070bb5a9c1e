internal import Foundation

/// What a set of pending migrations changes on disk, computed in memory before anything is
/// written: the files to write (data, rewritten and new outbox commands, the new `folio.json`) and
/// the files to remove. ``MigrationCommit`` writes it crash-safely; a dry run only describes it.
struct MigrationPlan {
    var writes: [(path: String, bytes: [UInt8])] = []
    var removes: [String] = []
    /// Collections whose files changed (their derived id indexes are dropped).
    var collections: Set<String> = []
    var report: MigrationReport

    /// Runs the steps of `migrations` on the store's committed state, in memory.
    /// - Parameters:
    ///   - migrations: The pending migrations, in order.
    ///   - applied: The names recorded before them.
    ///   - engine: The store (its journal applied; the caller holds the writers' lock).
    ///   - marker: The store's `folio.json` as it is.
    ///   - progress: Told of each partition file of the collections the steps name, as it is
    ///     read (``FolioProgress/Phase/migrating``).
    static func make(
        _ migrations: [Migrator.Migration], applied: [String], engine: StoreEngine,
        marker: [String: JSONValue], progress: ProgressHandler?
    ) throws(FolioError) -> MigrationPlan {
        let database = MigrationDatabase(engine: engine)
        let steps = migrations.flatMap(\.steps)
        if let progress { try database.reportReading(of: steps.flatMap(\.namedCollections), to: progress) }
        for step in steps { try database.apply(step) }
        database.finishReading()
        var plan = MigrationPlan(report: MigrationReport(pending: migrations.map(\.name), schemaVersion: applied.count + migrations.count))
        try plan.addData(from: database)
        let enqueue = migrations.reduce(into: Set<String>()) { $0.formUnion($1.enqueuesCommandsFor) }
        try plan.addCommands(migrating: steps, engine: engine, enqueueFor: enqueue, database: database)
        var newMarker = marker
        newMarker[SchemaMarker.key] = SchemaMarker.json(migrations: applied + migrations.map(\.name))
        plan.writes.append((StoreLayout.marker, JSONWriter.pretty(.object(newMarker))))
        return plan
    }

    /// The partition files of every collection the steps touched, compared with what is stored.
    private mutating func addData(from database: MigrationDatabase) throws(FolioError) {
        for (collection, entities) in database.collections.sorted(by: { $0.key < $1.key }) {
            let original = database.originalPartitions[collection] ?? [:]
            var granularity: PartitionGranularity?
            var partitions: [PartitionAddress: PartitionFile.Contents] = [:]
            for (id, stored) in entities {
                let kind = Self.granularity(ofKey: stored.partition)
                guard let kind, granularity == nil || granularity == kind else {
                    throw FolioError(
                        .migrationFailed,
                        "after migrating, collection \(collection) would mix partition keys (\"\(stored.partition)\" of entity \"\(id)\"): every entity needs a key of the same kind",
                        entityID: id)
                }
                granularity = kind
                let address = try PartitionAddress(collection: collection, granularity: kind, partitionText: stored.partition)
                var contents = partitions[address] ?? PartitionFile.Contents(entities: [:], extra: original[address]?.extra ?? [:])
                contents.entities[id] = .object(stored.fields)
                if let version = stored.version { contents.versions[id] = version }
                partitions[address] = contents
            }
            // Tombstone versions stay with their collection, in the partition that now holds
            // their key (a day's month, or the one file).
            for (id, tombstone) in database.tombstones[collection] ?? [:] where entities[id] == nil {
                let kind = granularity ?? Self.granularity(ofKey: tombstone.partition)
                var key = tombstone.partition
                switch (Self.granularity(ofKey: key), kind) {
                case (let from, let to) where from == to: break
                case (.day?, .month?): key = String(key.prefix(7))
                case (_, PartitionGranularity.none?): key = ""
                default:
                    throw FolioError(
                        .migrationFailed,
                        "collection \(collection) has a delete of \"\(id)\" waiting for the server (its version is kept in \(tombstone.partition)); sync before repartitioning it by day",
                        entityID: id)
                }
                let address = try PartitionAddress(collection: collection, granularity: kind ?? .none, partitionText: key)
                var contents = partitions[address] ?? PartitionFile.Contents(entities: [:], extra: original[address]?.extra ?? [:])
                contents.versions[id] = tombstone.version
                partitions[address] = contents
            }
            let before = database.originalEntities[collection] ?? [:]
            for (address, contents) in partitions where original[address].map({ !Self.same($0, contents) }) ?? true {
                writes.append((address.path, PartitionFile.encode(contents)))
            }
            for address in original.keys where partitions[address] == nil { removes.append(address.path) }
            let changed = entities.filter { id, new in
                guard let old = before[id] else { return true }
                return old.fields != new.fields || old.partition != new.partition
            }.count
            let removed = before.keys.filter { entities[$0] == nil }.count
            if changed > 0 || removed > 0 || partitions.keys.contains(where: { original[$0] == nil }) {
                collections.insert(collection)
                report.collections.append(
                    MigrationReport.Collection(
                        name: collection, entitiesChanged: changed, entitiesRemoved: removed,
                        filesWritten: writes.filter { $0.path.hasPrefix(collection + "/") || $0.path == collection + ".json" }.count,
                        filesRemoved: removes.filter { $0.hasPrefix(collection + "/") || $0 == collection + ".json" }.count))
            }
        }
        if !removes.isEmpty {
            collections.formUnion(removes.compactMap { $0.split(separator: "/").first.map { String($0.hasSuffix(".json") ? $0.dropLast(5) : $0) } })
        }
    }

    private static func same(_ a: PartitionFile.Contents, _ b: PartitionFile.Contents) -> Bool {
        a.entities == b.entities && a.versions == b.versions && a.extra == b.extra
    }

    static func granularity(ofKey key: String) -> PartitionGranularity? {
        if key.isEmpty { return PartitionGranularity.none }
        if PartitionKey.day(parsing: key) != nil { return .day }
        if PartitionKey.month(parsing: key) != nil { return .month }
        return nil
    }

    /// Pending and failed commands rewritten by the steps, and the commands the app asked for.
    private mutating func addCommands(
        migrating steps: [MigrationStep], engine: StoreEngine, enqueueFor: Set<String>,
        database: MigrationDatabase
    ) throws(FolioError) {
        let mayHaveBeenSent = try OutboxMigration.mayHaveBeenSent(engine)
        for path in try OutboxMigration.commandFiles(in: engine.fileSystem) {
            if path.hasPrefix(OutboxBook.folder + "/"), !path.hasPrefix(OutboxBook.failedFolder + "/"),
                let sequence = CommandFileName.sequence(fromFileName: FileSystem.name(of: path)), mayHaveBeenSent(sequence)
            {
                // Its request may have been applied with its answer lost: the retry must be the
                // same request, or the server would refuse the reused key (PROTOCOL.md).
                report.commandsKept += 1
                continue
            }
            guard let (bytes, _) = try engine.fileSystem.read(path) else { continue }
            // A command file that does not parse is the outbox's business (quarantine): untouched,
            // and said, so the migration's report does not look as if it had been migrated.
            let json: JSONValue
            do { json = try JSONParser.parse(bytes) } catch {
                engine.report(
                    .warning,
                    "not migrated: line \(error.line), column \(error.column): \(error.message); "
                        + "the outbox quarantines it until it is repaired", path: path)
                report.commandsKept += 1
                continue
            }
            guard let migrated = try OutboxMigration.migrate(json, steps: steps, coder: engine.coder), migrated != json else { continue }
            writes.append((path, JSONWriter.pretty(migrated)))
            report.commandsRewritten += 1
        }
        guard !enqueueFor.isEmpty else { return }
        var sequence = try engine.nextSequence()
        let now = Date()
        for collection in enqueueFor.sorted() {
            let after = database.collections[collection] ?? [:]
            let before = database.originalEntities[collection] ?? [:]
            for id in Set(after.keys).union(before.keys).sorted(by: { $0.precedesInKeyOrder($1) }) {
                let old = before[id], new = after[id]
                if let old, let new, old.fields == new.fields, old.partition == new.partition { continue }
                let command = OutboxCommand.make(
                    sequence: sequence, writer: engine.commandIDPrefix, operation: new == nil ? .delete : .upsert, collection: collection,
                    entityID: id, partition: (new ?? old)!.partition, baseVersion: (new ?? old)!.version,
                    body: new.map { .object($0.fields) }, base: old.map { .object($0.fields) }, timestamp: now)
                writes.append((OutboxBook.folder + "/" + CommandFileName.name(sequence), JSONWriter.pretty(command)))
                report.commandsEnqueued += 1
                sequence += 1
            }
        }
    }
}
