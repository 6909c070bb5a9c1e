public import Foundation

extension Store {
    /// Opening's schema work, with the writers' lock held: finish or discard an interrupted
    /// migration, recover the journal, then run the configured migrator's pending migrations.
    /// - Returns: The state to serve (rebuilt if a migration rewrote files).
    static func openState(fileSystem: FileSystem, configuration: Configuration, storeID: String) throws(FolioError) -> StoreEngine {
        try MigrationCommit.finish(fileSystem, log: configuration.logHandler)
        func fresh() throws(FolioError) -> StoreEngine {
            let engine = try StoreEngine(fileSystem: fileSystem, log: configuration.logHandler, cacheBudget: configuration.partitionCacheBudget)
            engine.use(StoreSettings(storeID: storeID, configuration: configuration))
            try engine.removeLeftoverTempFiles()
            // A copy of a live folder is checked before anything in it is replayed or written.
            let origin = try engine.checkOrigin()
            try engine.makeMissingLog(origin)
            // Before anything is written: every revision of a data file names this writer.
            engine.adoptWriterID(try WriterID.ensure(in: fileSystem) { level, text in engine.report(level, text, path: WriterID.path) })
            try recover(engine)
            try engine.settleOrigin(origin)
            try MachineryIgnore.ensure(in: fileSystem)
            return engine
        }
        let engine = try fresh()
        guard let migrator = configuration.migrator else { return engine }
        let report: MigrationReport
        do { report = try migrate(engine, with: migrator, log: configuration.logHandler) } catch {
            engine.close()
            throw error
        }
        if report.pending.isEmpty { return engine }
        engine.close()
        return try fresh()
    }

    /// Runs the migrator's pending migrations on a recovered state (writers' lock held), telling
    /// `progress` of each file read, staged, and moved into place (``Migrator/migrate(at:progress:)``).
    static func migrate(
        _ engine: StoreEngine, with migrator: Migrator, log: LogHandler?, progress: ProgressHandler? = nil
    ) throws(FolioError) -> MigrationReport {
        let (marker, applied) = try SchemaMarker.read(engine.fileSystem)
        let pending = try migrator.pending(applied: applied)
        guard !pending.isEmpty else { return MigrationReport(pending: [], schemaVersion: applied.count) }
        // The journal's records would be applied again on top of the migrated files: migrate
        // only once recovery emptied it (it cannot when the disk is full).
        guard engine.journalRecordCount == 0 else {
            throw FolioError(
                .migrationFailed,
                "the journal still holds \(engine.journalRecordCount) transaction(s) that could not be written to the files (a full disk?); nothing was migrated: free space and open the store again",
                path: StoreLayout.journal)
        }
        let plan = try MigrationPlan.make(pending, applied: applied, engine: engine, marker: marker, progress: progress)
        log?(LogMessage(level: .info, text: plan.report.description, path: StoreLayout.marker))
        // The migration rewrites and enqueues command files itself: the index would miss them.
        try OutboxEntityIndex.forget(in: engine.fileSystem)
        try MigrationCommit.run(plan, fileSystem: engine.fileSystem, log: log, progress: progress)
        return plan.report
    }

    /// A read-only open cannot finish an interrupted migration (the files are half old, half new)
    /// nor accept a store migrated by a newer app: it refuses both, and never writes.
    static func checkSchemaReadOnly(_ fileSystem: FileSystem, configuration: Configuration) throws(FolioError) {
        if try fileSystem.identity(MigrationCommit.commitFile) != nil {
            throw FolioError(
                .readOnly, "a migration was interrupted after its commit and must be finished by a read-write open (the app) before the store can be read",
                path: MigrationCommit.folder)
        }
        if let migrator = configuration.migrator {
            _ = try migrator.pending(applied: try SchemaMarker.read(fileSystem).migrations)
        }
    }

    /// Runs `body` on a fresh state of the store at `url` under the writers' lock: for a dry run
    /// (the journal's records applied in memory only), or `recovering` (applied to the files).
    static func withMigrationLock<T>(at url: URL, recovering: Bool = false, _ body: (StoreEngine) throws(FolioError) -> T) async throws -> T {
        let fileSystem = FileSystem(root: url.standardizedFileURL.path)
        guard try fileSystem.identity(StoreLayout.marker) != nil else {
            throw FolioError(.unsupportedFormat, "not a Folio store: there is no folio.json", path: url.path)
        }
        try fileSystem.makeDirectoryDurably(StoreLayout.tempFolder)
        let lock = try FileLock(fileSystem: fileSystem)
        defer { lock.close() }
        try await lock.acquire(exclusive: true)
        defer { lock.release(exclusive: true) }
        try MigrationCommit.finish(fileSystem, log: nil)
        let engine = try StoreEngine(fileSystem: fileSystem, log: nil)
        defer { engine.close() }
        engine.use(StoreSettings(storeID: try Marker.ensure(in: fileSystem)))
        if recovering {
            try engine.removeLeftoverTempFiles()
            engine.adoptWriterID(try WriterID.ensure(in: fileSystem) { level, text in engine.report(level, text, path: WriterID.path) })
            try recover(engine)
        } else {
            try engine.refreshJournal()
        }
        return try body(engine)
    }

    /// The schema of the store at `url`, read without opening it: the migrations it recorded and
    /// whether a migration was interrupted after its commit (the next open finishes it).
    /// - Parameter url: The store's folder.
    /// - Returns: The schema status.
    /// - Throws: ``FolioError`` if `folio.json` is missing or unreadable.
    public static func schema(at url: URL) async throws -> StoreSchema {
        let fileSystem = FileSystem(root: url.standardizedFileURL.path)
        let migrations = try SchemaMarker.read(fileSystem).migrations
        let interrupted = try fileSystem.identity(MigrationCommit.commitFile) != nil
        let staged = try fileSystem.identity(MigrationCommit.folder) != nil
        return StoreSchema(
            version: migrations.count, migrations: migrations,
            interruptedMigration: interrupted ? .committed : staged ? .uncommitted : nil)
    }
}

/// A store's schema, as recorded in its `folio.json`.
public struct StoreSchema: Sendable, Equatable {
    /// A migration a crash interrupted.
    public enum Interrupted: String, Sendable {
        /// It committed: the next open finishes it (the store is already the new one).
        case committed
        /// It did not commit: the next open discards what it staged (the store is the old one).
        case uncommitted
    }

    /// The number of migrations applied.
    public let version: Int
    /// Their names, in order.
    public let migrations: [String]
    /// A migration a crash interrupted, if any.
    public let interruptedMigration: Interrupted?
}
