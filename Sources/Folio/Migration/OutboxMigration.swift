/// Pending and failed commands across a migration: they were queued in the old shape and will be
/// sent by the new app, so they are migrated with the data (PROTOCOL.md, "Schema versions").
///
/// An upsert's `entity` and every command's `base` go through the same steps as the stored
/// entities; `collection` and `partition` follow renames and moves. Custom commands, sent
/// commands (`outbox/sent/`), quarantined files, and pending commands that may already have
/// reached the server (``mayHaveBeenSent(_:)``) are left as they are.
enum OutboxMigration {
    /// The command files that may still be sent: `outbox/*.json` and `outbox/failed/*.json`.
    static func commandFiles(in fileSystem: FileSystem) throws(FolioError) -> [String] {
        var paths: [String] = []
        for folder in [OutboxBook.folder, OutboxBook.failedFolder] {
            for entry in try fileSystem.list(folder) where !entry.isDirectory && CommandFileName.sequence(fromFileName: entry.name) != nil {
                paths.append(folder + "/" + entry.name)
            }
        }
        return paths.sorted()
    }

    /// Whether a pending command may already have reached the server: up to `.folio/sent.json`'s
    /// mark, or with a failed attempt recorded in `.folio/attempts.json` (an unreadable file counts
    /// every command). Such a command is sent again as it is, under its key.
    static func mayHaveBeenSent(_ engine: StoreEngine) throws(FolioError) -> (UInt64) -> Bool {
        let sentThrough = try engine.sentThrough()
        var attempted: Set<UInt64> = []
        if let (bytes, _) = try engine.fileSystem.read(Store.attemptsFile) {
            do { attempted = Set((try JSONParser.parse(bytes).objectValue ?? [:]).keys.compactMap { UInt64($0) }) } catch {
                engine.report(.warning, "unreadable (\(error.message)); a migration keeps every pending command as queued", path: Store.attemptsFile)
                return { _ in true }
            }
        }
        return { sequence in sequence <= sentThrough || attempted.contains(sequence) }
    }

    /// The command after the steps, or nil if it is not an entity command.
    static func migrate(_ command: JSONValue, steps: [MigrationStep], coder: EntityCoder) throws(FolioError) -> JSONValue? {
        guard case .object(var members) = command, let operation = members["operation"]?.stringValue,
            operation == "upsert" || operation == "delete",
            var collection = members["collection"]?.stringValue, let id = members["entityID"]?.stringValue
        else { return nil }
        var partition = members["partition"]?.stringValue ?? ""
        var entity = members["entity"]?.objectValue
        var base = members["base"]?.objectValue
        for step in steps {
            let map: MigrationStep.EntityMap
            switch step.kind {
            case .renameCollection(let from, let to):
                if collection == from { collection = to }
                continue
            case .map(let target, let entityMap):
                guard collection == target else { continue }
                map = entityMap
            case .custom(_, let commands):
                guard let commands, collection == commands.collection else { continue }
                map = commands.map
            }
            let before = collection
            do {
                if let fields = base {
                    var value = MigratingEntity(id: id, collection: before, partition: partition, fields: fields)
                    try map(&value, coder)
                    base = value.fields
                    if entity == nil { (collection, partition) = (value.collection, value.partition) }
                }
                if let fields = entity {
                    var value = MigratingEntity(id: id, collection: before, partition: partition, fields: fields)
                    try map(&value, coder)
                    (entity, collection, partition) = (value.fields, value.collection, value.partition)
                }
            } catch {
                throw FolioError(
                    .migrationFailed,
                    "\(step.summary): pending command \(members["sequence"].map { JSONWriter.compact($0) }.map { String(decoding: $0, as: UTF8.self) } ?? "?") of \"\(id)\": \(MigrationDatabase.failure(error, step: step, id: id).message)",
                    entityID: id)
            }
        }
        members["collection"] = .string(collection)
        if members["partition"] != nil || !partition.isEmpty { members["partition"] = .string(partition) }
        if let entity { members["entity"] = .object(entity) }
        if let base { members["base"] = .object(base) }
        return .object(members)
    }
}
