public import Foundation

/// The app's schema history: named migrations, registered in order, each applied once to a store
/// and recorded in its `folio.json`. Modeled on GRDB's `DatabaseMigrator`.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.registerMigration("1-weather", [.setDefault("weather", .string("unknown"), in: "entries")])
/// migrator.registerMigration("2-mood-as-number", [
///     .changeField("mood", in: "entries") { old in old?.stringValue.flatMap(Int.init).map { .number(String($0)) } ?? old },
/// ])
/// var configuration = Store.Configuration()
/// configuration.migrator = migrator
/// let store = try await Store.open(at: folder, configuration: configuration)   // migrates if needed
/// ```
///
/// **All or nothing.** Opening the store runs every pending migration, in order, on the whole
/// store in memory, then writes the result crash-safely: a kill or power cut at any instant leaves
/// either the old data with the old schema version, or all of the new data with the new one, and
/// the next open finishes or discards what was interrupted (FORMAT.md, "Migrations"). If a step
/// throws, nothing is written and `open` throws ``FolioError/Code/migrationFailed``.
///
/// **Never edit a registered migration** that has shipped: stores that ran it will not run it
/// again. Add a new one.
///
/// **Newer stores are refused.** A store that recorded migrations this migrator does not have
/// (written by a newer version of the app) is not opened (``FolioError/Code/newerSchema``) and
/// never rewritten.
///
/// ## Topics
/// ### Registering
/// - ``registerMigration(_:enqueuingCommandsFor:_:)``
/// - ``registerMigration(_:enqueuingCommandsFor:migrate:)``
/// ### Inspecting a store
/// - ``appliedMigrations(at:)``
/// - ``pendingMigrations(at:)``
/// - ``dryRun(at:progress:)``
/// - ``migrate(at:progress:)``
public struct Migrator: Sendable {
    struct Migration: Sendable {
        let name: String
        let steps: [MigrationStep]
        let enqueuesCommandsFor: Set<String>
    }

    private(set) var migrations: [Migration] = []
    /// A registration mistake, reported when the migrator is used (a struct cannot throw from a
    /// mutating registration without making every call site `try`).
    private var mistake: String?

    /// Creates a migrator with no migrations.
    public init() {}

    /// The names of the registered migrations, in order.
    public var migrationNames: [String] { migrations.map(\.name) }

    /// The schema version of a store that ran every registered migration.
    public var schemaVersion: Int { migrations.count }

    /// Registers a migration made of steps.
    /// - Parameters:
    ///   - name: A unique name, recorded in the store once applied (e.g. `"2-rename-title"`).
    ///   - collections: The push collections whose entities the server must learn about: every
    ///     entity of them that the migration adds, changes or removes enqueues an upsert or delete
    ///     command. Default none: a migration changes the local shape only, and pending commands
    ///     are migrated with the data (PROTOCOL.md, "Schema versions").
    ///   - steps: The changes, in order.
    public mutating func registerMigration(_ name: String, enqueuingCommandsFor collections: Set<String> = [], _ steps: [MigrationStep]) {
        if name.isEmpty || name.utf8.count > 128 {
            mistake = mistake ?? "a migration name must be 1–128 bytes"
        } else if migrations.contains(where: { $0.name == name }) {
            mistake = mistake ?? "the migration \"\(name)\" is registered twice"
        }
        migrations.append(Migration(name: name, steps: steps, enqueuesCommandsFor: collections))
    }

    /// Registers a migration written as code over the store's data (split or merge entities, move
    /// them between collections…).
    /// - Parameters:
    ///   - name: A unique name.
    ///   - collections: The push collections whose changes enqueue commands (see
    ///     ``registerMigration(_:enqueuingCommandsFor:_:)``).
    ///   - migrate: The change.
    public mutating func registerMigration(
        _ name: String, enqueuingCommandsFor collections: Set<String> = [],
        migrate: @escaping @Sendable (MigrationDatabase) throws -> Void
    ) {
        registerMigration(name, enqueuingCommandsFor: collections, [.custom(migrate)])
    }

    /// The migrations of a store not applied yet; throws if the store is newer than this migrator.
    func pending(applied: [String]) throws(FolioError) -> [Migration] {
        if let mistake { throw FolioError(.migrationFailed, "invalid migrator: \(mistake)") }
        for (index, name) in applied.enumerated() {
            guard index < migrations.count else {
                throw FolioError(
                    .newerSchema,
                    "this store is at schema version \(applied.count) (its last migration is \"\(applied.last!)\"), written by a newer version of the app; this version knows \(migrations.count) migration(s). Update the app: Folio will not open or rewrite the store",
                    path: StoreLayout.marker)
            }
            guard migrations[index].name == name else {
                throw FolioError(
                    .newerSchema,
                    "this store's migration \(index + 1) is \"\(name)\", but this app's is \"\(migrations[index].name)\": the store was migrated by another version of the app; Folio will not open or rewrite it",
                    path: StoreLayout.marker)
            }
        }
        return Array(migrations[applied.count...])
    }

    /// The migrations a store recorded, in order.
    /// - Parameter url: The store's folder.
    /// - Returns: Their names.
    /// - Throws: ``FolioError`` if the folder is not a store or `folio.json` cannot be read.
    public func appliedMigrations(at url: URL) async throws -> [String] {
        try SchemaMarker.read(FileSystem(root: url.standardizedFileURL.path)).migrations
    }

    /// The migrations the store at `url` has not run yet, in order (read-only).
    /// - Parameter url: The store's folder.
    /// - Returns: Their names; empty when the store is up to date.
    /// - Throws: ``FolioError/Code/newerSchema`` for a store migrated by a newer version of the
    ///   app, or ``FolioError`` if `folio.json` cannot be read.
    public func pendingMigrations(at url: URL) async throws -> [String] {
        try pending(applied: try await appliedMigrations(at: url)).map(\.name)
    }

    /// Runs the pending migrations of the store at `url` now, as opening it with this migrator
    /// does (``Store/Configuration/migrator``), and reports what changed. Other processes may
    /// have the store open; they wait for the writers' lock meanwhile.
    /// - Parameters:
    ///   - url: The store's folder.
    ///   - progress: Called as it goes, file by file, once it holds the writers' lock and
    ///     recovered the journal, if a migration is pending (an up-to-date store reports nothing).
    ///     Three phases, each with its total known when it starts: ``FolioProgress/Phase/migrating``,
    ///     each partition file of the collections the steps name, read to migrate it in memory (a
    ///     collection only a custom step reads is not counted); ``FolioProgress/Phase/staging``,
    ///     each file the migration writes (data files, outbox commands, `folio.json`) staged before
    ///     its commit; ``FolioProgress/Phase/finishing``, each of them moved into place, and each
    ///     file it removes, after the commit. Nil (the default) for no reports.
    /// - Returns: What the migrations changed (`pending` is empty if there were none).
    /// - Throws: ``FolioError``: ``FolioError/Code/newerSchema``, ``FolioError/Code/migrationFailed``
    ///   (nothing changed), ``FolioError/Code/corruptFile`` for a file that must be fixed first.
    @discardableResult
    public func migrate(at url: URL, progress: ProgressHandler? = nil) async throws -> MigrationReport {
        try await Store.withMigrationLock(at: url, recovering: true) { engine throws(FolioError) in
            try Store.migrate(engine, with: self, log: nil, progress: progress)
        }
    }

    /// What opening the store with this migrator would change, without changing it (a committed
    /// migration interrupted by a crash is finished first, as any open would).
    /// - Parameters:
    ///   - url: The store's folder.
    ///   - progress: Called as it goes, file by file, once it holds the writers' lock and read
    ///     the journal, if a migration is pending (an up-to-date store reports nothing): one
    ///     phase, ``FolioProgress/Phase/migrating``, each partition file of the collections the
    ///     steps name, read and migrated in memory (a collection only a custom step reads is not
    ///     counted); its total is known when it starts. Nil (the default) for no reports.
    /// - Returns: The pending migrations and the files and commands they would change.
    /// - Throws: ``FolioError``: ``FolioError/Code/newerSchema`` for a store newer than this
    ///   migrator, ``FolioError/Code/migrationFailed`` if a step would fail (naming the entity),
    ///   ``FolioError/Code/corruptFile`` for a file that must be fixed first.
    public func dryRun(at url: URL, progress: ProgressHandler? = nil) async throws -> MigrationReport {
        try await Store.withMigrationLock(at: url) { engine throws(FolioError) in
            let (marker, applied) = try SchemaMarker.read(engine.fileSystem)
            let pending = try self.pending(applied: applied)
            if pending.isEmpty { return MigrationReport(pending: [], schemaVersion: applied.count) }
            return try MigrationPlan.make(pending, applied: applied, engine: engine, marker: marker, progress: progress).report
        }
    }
}
