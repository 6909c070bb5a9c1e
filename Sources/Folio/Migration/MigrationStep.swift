internal import Foundation

/// One change a migration makes to the stored data (and to the outbox commands still waiting).
///
/// Steps run in order, on the whole store in memory; the migration writes the result all at once
/// (``Migrator``). JSON-level steps need no Swift type; ``convert(_:from:to:_:)`` decodes the old
/// Swift type and writes the new one.
///
/// ## Topics
/// ### Fields
/// - ``renameField(_:to:in:)``
/// - ``removeField(_:in:)``
/// - ``setDefault(_:_:in:)``
/// - ``changeField(_:in:_:)``
/// - ``updateEntities(in:_:)``
/// ### Collections and partitions
/// - ``renameCollection(_:to:)``
/// - ``repartition(_:by:key:)``
/// - ``moveEntities(in:to:)``
/// ### Typed and custom
/// - ``convert(_:from:to:_:)``
/// - ``custom(commands:_:)``
public struct MigrationStep: Sendable {
    /// A change of one entity (data, or a pending command's `entity` and `base`).
    typealias EntityMap = @Sendable (inout MigratingEntity, EntityCoder) throws -> Void

    enum Kind: Sendable {
        /// Applied to every entity of `collection` and to its commands.
        case map(collection: String, EntityMap)
        /// Moves a whole collection.
        case renameCollection(from: String, to: String)
        /// Anything, on the whole store; `commands` (if any) rewrites pending commands' entities.
        case custom(@Sendable (MigrationDatabase) throws -> Void, commands: (collection: String, map: EntityMap)?)
    }

    let kind: Kind
    /// What the step does, for dry runs and logs.
    let summary: String

    /// The collections the step reads by name; a custom step reads what its code asks for.
    var namedCollections: [String] {
        switch kind {
        case .map(let collection, _): [collection]
        case .renameCollection(let from, let to): [from, to]
        case .custom: []
        }
    }

    /// Renames a field of every entity of a collection. An entity that has no such field is left
    /// as it is; one that already has the new name is an error (nothing is overwritten).
    /// - Parameters:
    ///   - field: The old name.
    ///   - newName: The new name.
    ///   - collection: The collection.
    /// - Returns: The step.
    public static func renameField(_ field: String, to newName: String, in collection: String) -> MigrationStep {
        MigrationStep(
            kind: .map(collection: collection) { entity, _ in
                guard let value = entity.fields.removeValue(forKey: field) else { return }
                guard entity.fields[newName] == nil else {
                    throw FolioError(.migrationFailed, "cannot rename \"\(field)\" to \"\(newName)\": the entity has both", entityID: entity.id)
                }
                entity.fields[newName] = value
            }, summary: "rename field \(collection).\(field) to \(newName)")
    }

    /// Removes a field from every entity of a collection.
    /// - warning: The field's values are gone once the migration commits. Keep a backup
    ///   (``Store/backup(to:progress:)``) if you may need them.
    /// - Parameters:
    ///   - field: The field.
    ///   - collection: The collection.
    /// - Returns: The step.
    public static func removeField(_ field: String, in collection: String) -> MigrationStep {
        MigrationStep(
            kind: .map(collection: collection) { entity, _ in entity.fields[field] = nil },
            summary: "remove field \(collection).\(field)")
    }

    /// Gives a field a value in every entity of a collection that lacks it (or has it `null`).
    /// - Parameters:
    ///   - field: The field.
    ///   - value: Its value, e.g. `.string("unknown")`, `.number("0")`, `.bool(false)`.
    ///   - collection: The collection.
    /// - Returns: The step.
    public static func setDefault(_ field: String, _ value: JSONValue, in collection: String) -> MigrationStep {
        MigrationStep(
            kind: .map(collection: collection) { entity, _ in
                if entity.fields[field] == nil || entity.fields[field] == .null { entity.fields[field] = value }
            }, summary: "set default of \(collection).\(field)")
    }

    /// Changes one field of every entity of a collection: a type change (`"3"` to `3`), a new
    /// representation. The closure gets the field's value (nil when absent) and returns the new
    /// one (nil removes the field); throwing fails the whole migration, which then changes nothing.
    /// - Parameters:
    ///   - field: The field.
    ///   - collection: The collection.
    ///   - transform: The change.
    /// - Returns: The step.
    public static func changeField(
        _ field: String, in collection: String,
        _ transform: @escaping @Sendable (JSONValue?) throws -> JSONValue?
    ) -> MigrationStep {
        MigrationStep(
            kind: .map(collection: collection) { entity, _ in
                do { entity.fields[field] = try transform(entity.fields[field]) } catch {
                    throw FolioError(.migrationFailed, "changing \(collection).\(field): \(error)", entityID: entity.id)
                }
            }, summary: "change field \(collection).\(field)")
    }

    /// Changes every entity of a collection as a whole: its fields, its partition, or its
    /// collection (the entity moves). Applied to pending commands' entities too.
    /// - Parameters:
    ///   - collection: The collection.
    ///   - update: The change.
    /// - Returns: The step.
    public static func updateEntities(
        in collection: String,
        _ update: @escaping @Sendable (inout MigratingEntity) throws -> Void
    ) -> MigrationStep {
        MigrationStep(
            kind: .map(collection: collection) { entity, _ in try update(&entity) },
            summary: "update entities of \(collection)")
    }

    /// Renames a collection: its files move (`todos/…` to `tasks/…`), pending commands name the
    /// new collection. The new name must not hold data yet.
    /// - Parameters:
    ///   - collection: The old name.
    ///   - newName: The new name.
    /// - Returns: The step.
    public static func renameCollection(_ collection: String, to newName: String) -> MigrationStep {
        MigrationStep(kind: .renameCollection(from: collection, to: newName), summary: "rename collection \(collection) to \(newName)")
    }

    /// Changes how a collection is partitioned (day to month, month to day, to or from one file).
    /// - Parameters:
    ///   - collection: The collection.
    ///   - granularity: The new partitioning.
    ///   - key: The new partition key of an entity. Day to month needs none (a day's month);
    ///     anything to day needs one (say, from the entity's date field). A key that does not fit
    ///     the new granularity fails the migration.
    /// - Returns: The step.
    public static func repartition(
        _ collection: String, by granularity: PartitionGranularity,
        key: (@Sendable (MigratingEntity) throws -> String)? = nil
    ) -> MigrationStep {
        MigrationStep(
            kind: .map(collection: collection) { entity, _ in
                if let key {
                    entity.partition = try key(entity)
                } else {
                    switch granularity {
                    case .none: entity.partition = ""
                    case .month where entity.partition.count >= 7: entity.partition = String(entity.partition.prefix(7))
                    default:
                        throw FolioError(
                            .migrationFailed, "repartitioning \(collection) by \(granularity) needs a key for partition \"\(entity.partition)\"",
                            entityID: entity.id)
                    }
                }
            }, summary: "repartition \(collection) by \(granularity)")
    }

    /// Moves entities of a collection to other partitions (same granularity).
    /// - Parameters:
    ///   - collection: The collection.
    ///   - key: The partition key each entity must be in.
    /// - Returns: The step.
    public static func moveEntities(in collection: String, to key: @escaping @Sendable (MigratingEntity) throws -> String) -> MigrationStep {
        MigrationStep(
            kind: .map(collection: collection) { entity, _ in entity.partition = try key(entity) },
            summary: "move entities of \(collection)")
    }

    /// Decodes every entity of a collection as the old Swift type and writes the new one: the
    /// typed migration. Fields the old type did not know are kept. The new type's collection and
    /// partitioning decide where the result goes.
    /// - Parameters:
    ///   - old: The type the stored JSON decodes as (a copy of the old model, kept for this); its
    ///     encoding tells which stored fields it knew, so the others are carried over.
    ///   - collection: The collection it is stored in.
    ///   - new: The new entity type.
    ///   - convert: Makes the new value from the old one.
    /// - Returns: The step. An entity that does not decode as `old` fails the migration, naming it.
    public static func convert<Old: Codable & Sendable, New: Entity>(
        _ old: Old.Type, from collection: String, to new: New.Type, _ convert: @escaping @Sendable (Old) throws -> New
    ) -> MigrationStep {
        MigrationStep(
            kind: .map(collection: collection) { entity, coder in
                let stored = JSONValue.object(entity.fields)
                let value: Old
                do { value = try coder.decoder.decode(Old.self, from: Data(JSONWriter.compact(stored))) } catch {
                    throw FolioError(
                        .migrationFailed, "entity \"\(entity.id)\" of \(collection) does not decode as \(Old.self): \(EntityCoder.describe(error))",
                        entityID: entity.id)
                }
                let converted: New
                do { converted = try convert(value) } catch {
                    throw FolioError(.migrationFailed, "converting \"\(entity.id)\" to \(New.self): \(error)", entityID: entity.id)
                }
                // Fields neither type knows survive: what `Old` did not read is carried over.
                let known = try coder.encodeValue(value)
                let json = UnknownFields.merge(stored: stored, known: known, new: try coder.encode(converted))
                guard converted.id.storageKey == entity.id else {
                    throw FolioError(
                        .migrationFailed, "converting \"\(entity.id)\" to \(New.self) changed its id to \"\(converted.id.storageKey)\"", entityID: entity.id)
                }
                entity.collection = New.collection
                entity.partition = try New.partitioning.key(converted)
                entity.fields = json.objectValue ?? [:]
            }, summary: "convert \(collection) from \(Old.self) to \(New.self)")
    }

    /// Anything else: split entities, merge them, move them between collections, through a
    /// ``MigrationDatabase``.
    /// - Parameters:
    ///   - commands: How pending commands of one collection change, if they must (e.g. the part
    ///     of an entity that stays); without it, pending commands are sent as they were queued.
    ///   - body: The change.
    /// - Returns: The step.
    public static func custom(
        commands: (collection: String, update: @Sendable (inout MigratingEntity) throws -> Void)? = nil,
        _ body: @escaping @Sendable (MigrationDatabase) throws -> Void
    ) -> MigrationStep {
        let map: (collection: String, map: EntityMap)? = commands.map { commands in
            (commands.collection, { entity, _ in try commands.update(&entity) })
        }
        return MigrationStep(kind: .custom(body, commands: map), summary: "custom change")
    }
}
