public import Foundation

/// A Folio store: one folder of JSON files, and the single source of truth for the data in it.
///
/// ```swift
/// let store = try await Store.open(at: folder)
/// try await store.write { tx in
///     try tx.upsert(Todo(id: UUID(), title: "Buy milk", date: "2026-11-22"))
/// }
/// let today = try await store.fetch(Query<Todo>(.day("2026-11-22")))
/// ```
///
/// Open one `Store` per folder in a process and share it. Other processes (a widget, the `folio`
/// tool) may open the same folder at the same time: writers take turns through a file lock, and
/// every process sees the others' committed changes on its next read.
///
/// ## Topics
/// ### Opening and closing
/// - ``open(at:configuration:)``
/// - ``close()``
/// ### Reading
/// - ``get(_:id:)``
/// - ``fetch(_:)``
/// ### Writing
/// - ``write(_:)``
/// - ``checkpoint()``
/// - ``backup(to:progress:)``
public actor Store {
    /// The store's folder.
    public nonisolated let url: URL
    let configuration: Configuration
    let fileSystem: FileSystem
    let lock: FileLock
    var engine: StoreEngine
    /// Set when a failed sync left what is on disk unknown; the next operation reloads.
    var needsReload = false
    var isClosed = false

    // Writers of this process take turns through `writerGate`; the flock is held from the first
    // append of a group until its sync is done (see Store+Write.swift).
    var writerGate = AsyncGate()
    var holdsExclusiveLock = false
    var groupCommit = GroupCommit()
    /// Writers that called `write` and have not appended yet (counted before they reach the
    /// actor, so that a writer about to sync knows whether anyone could share its sync).
    nonisolated let arrivals = WriterArrivals()
    var lastCommit = ContinuousClock.now
    var lastSeenJournalPosition = JournalPosition(generation: nil, offset: 0)
    var checkpointTask: Task<Void, Never>?
    /// Saves what queries found to change in the field index once reads are quiet
    /// (Store+DerivedIndexes.swift).
    var fieldIndexTask: Task<Void, Never>?
    /// Called after commits that queue commands (the sync engine's nudge).
    var outboxListeners: [UUID: @Sendable () -> Void] = [:]
    /// The change streams, the folder watcher and what observers were told (see
    /// Store+Changes.swift); shared with every state this store builds.
    let feed: ChangeFeed
    /// Why the store is read-only, or nil when it can write (see Store+ReadOnly.swift).
    let readOnlyReason: String?

    init(
        url: URL, configuration: Configuration, fileSystem: FileSystem, lock: FileLock, engine: StoreEngine,
        readOnlyReason: String? = nil
    ) {
        self.url = url
        self.configuration = configuration
        self.fileSystem = fileSystem
        self.lock = lock
        self.engine = engine
        self.feed = engine.feed
        self.readOnlyReason = readOnlyReason
    }

    /// Opens the store in `url`, creating the folder and an empty store if there is none.
    ///
    /// Opening recovers from any crash: it removes leftover temp files, replays the committed
    /// records of the journal into the partition files, and drops a torn journal tail. It reads
    /// no partition file; those are read on first use.
    /// - Parameters:
    ///   - url: The store's folder (a file URL).
    ///   - configuration: Durability, checkpoint timing, logging.
    /// - Returns: The open store.
    /// - Throws: ``FolioError`` with ``FolioError/Code/unsupportedFormat`` if the folder is not
    ///   empty and not a Folio store, or was written by a newer Folio; ``FolioError/Code/io`` if
    ///   the folder cannot be created or read; with a ``Configuration/migrator``,
    ///   ``FolioError/Code/newerSchema`` or ``FolioError/Code/migrationFailed``.
    public static func open(at url: URL, configuration: Configuration = Configuration()) async throws -> Store {
        let fileSystem = FileSystem(root: url.standardizedFileURL.path, hook: configuration.ioHook)
        if configuration.readOnly {
            return try await openReadOnly(url, configuration: configuration, fileSystem: fileSystem, because: "its configuration says so")
        }
        let lock: FileLock
        do throws(FolioError) { lock = try writersLock(fileSystem) } catch {
            guard let reason = notWritableReason(error) else { throw error }
            configuration.logHandler?(LogMessage(level: .warning, text: "opened read-only: \(reason)", path: nil))
            return try await openReadOnly(url, configuration: configuration, fileSystem: fileSystem, because: reason)
        }
        try await lock.acquire(exclusive: true)
        do {
            let storeID = try Marker.ensure(in: fileSystem)
            // Recovery, and the configured migrator's pending migrations (Store+Migrate.swift).
            let engine = try openState(fileSystem: fileSystem, configuration: configuration, storeID: storeID)
            lock.release(exclusive: true)
            return Store(url: url, configuration: configuration, fileSystem: fileSystem, lock: lock, engine: engine)
        } catch {
            lock.release(exclusive: true)
            throw error.keepingCopyOfJournal(fileSystem)
        }
    }

    /// Replays the journal into the files and resets it (under the writers' lock).
    static func recover(_ engine: StoreEngine) throws(FolioError) {
        try engine.refreshJournal()
        if let header = engine.journalHeader {
            let tail = try engine.journalBytesPastRecords()
            if tail > 0 {
                engine.report(
                    .warning, "discarding \(tail) bytes of incomplete journal tail (transactions that never committed)",
                    path: StoreLayout.journal)
            }
            if engine.journalRecordCount > 0 {
                engine.report(
                    .info, "replaying \(engine.journalRecordCount) committed transaction(s) from generation \(header.generation)",
                    path: StoreLayout.journal)
            }
        }
        do {
            try engine.checkpoint()
        } catch let error where error.code == .diskFull {
            // The journal keeps the committed changes and every read applies them: a full disk
            // must not stop the app from reading its data. The next open tries again.
            engine.report(
                .warning,
                "could not bring the files up to date (\(error.message)); the journal keeps the changes and they are served from it until there is space",
                path: error.path)
        }
        try engine.ensureJournalHeader()
    }

    /// Writes everything to the partition files and closes the store. Later calls throw
    /// ``FolioError/Code/storeClosed``.
    ///
    /// Every transaction a `write` acknowledged stays committed whatever happens here: if the
    /// final checkpoint fails (a full disk, a broken file), the failure goes to the log handler,
    /// the journal keeps the changes, and the next open applies them. So a failure here never
    /// means "not saved".
    /// - Throws: Nothing today; kept `throws` so later versions can report closing failures.
    public func close() async throws {
        guard !isClosed else { return }
        finishChangeStreams()
        checkpointTask?.cancel()
        checkpointTask = nil
        if !needsReload, readOnlyReason == nil { saveFieldIndexesNow() }
        if !groupCommit.isIdle {
            do { try await waitUntilDurable(engine.journalEnd) } catch { needsReload = true }
        }
        defer {
            isClosed = true
            engine.close()
            holdsExclusiveLock = false
            lock.close()
        }
        guard !needsReload, readOnlyReason == nil else { return }
        do {
            try await checkpoint()
        } catch {
            engine.report(
                .error, "the checkpoint at close failed; the journal keeps every committed change and the next open applies them: \(error)",
                path: (error as? FolioError)?.path)
        }
    }

    /// The entity with this id, or nil if there is none.
    /// - Parameters:
    ///   - type: The entity type.
    ///   - id: The entity's id. The caller need not know its partition.
    /// - Returns: The entity, or nil.
    /// - Throws: ``FolioError``: ``FolioError/Code/corruptFile`` if its file cannot be read, or if
    ///   the id is in two partition files (naming both: FORMAT.md, "Partition files");
    ///   ``FolioError/Code/decodingFailed`` (with file, line, column and field) if the stored JSON
    ///   does not decode as `E` or its `id` field is not its key (``undecodableEntities(_:in:)``).
    public func get<E: Entity>(_ type: E.Type, id: E.ID) async throws -> E? {
        try await read { engine throws(FolioError) in try engine.get(E.self, id: id) }
    }

    /// The entities a query selects.
    /// - Parameter query: Which partitions, which entities, what order, how many.
    /// - Returns: The matching entities. Stored entities that do not decode as `E` (an old shape)
    ///   are skipped and logged; ``undecodableEntities(_:in:)`` lists them. An id the query finds
    ///   in two partition files is skipped (both copies) and logged.
    /// - Throws: ``FolioError``: ``FolioError/Code/corruptFile`` naming the file, line and column
    ///   if a selected file cannot be read (other partitions keep working),
    ///   ``FolioError/Code/invalidQuery`` for a selection the collection does not support.
    public func fetch<E: Entity>(_ query: Query<E>) async throws -> [E] {
        try await read { engine throws(FolioError) in try engine.fetch(query) }
    }

    /// Runs a read against the latest committed state of every process.
    ///
    /// The fast path takes no lock: refresh the journal, verify the partitions by identity. When a
    /// file changed on disk, another process may be checkpointing, so the read is redone under
    /// the shared lock, where no checkpoint runs and the files and journal agree.
    func read<T>(_ body: (StoreEngine) throws(FolioError) -> T) async throws -> T {
        try await prepare()
        // Whatever the read noticed (other processes' commits, edited files) is announced.
        defer {
            publishChanges()
            engine.readEnded()
            scheduleFieldIndexSave()
        }
        let result = try await readOnce(body)
        // A person's save this read found is adopted now (a command for push collections, the
        // app's onOutsideEdit hook). The read served the save, except where the journal's state
        // stood over it until the adoption (a second save of an entity the first one changed):
        // the read is made again to serve what was adopted.
        guard engine.hasAdoptableEdits && readOnlyReason == nil else { return result }
        try await adoptEdits()
        return try await readOnce(body)
    }

    private func readOnce<T>(_ body: (StoreEngine) throws(FolioError) -> T) async throws -> T {
        if holdsExclusiveLock {
            try engine.refreshJournal()
            return try located(body)
        }
        // Begun before the journal is read: files another process's checkpoint wrote are loaded
        // there when this one observes (StoreEngine.checkFilesCheckpointed).
        engine.beginLockFreePass()
        do throws(FolioError) { try engine.refreshJournal() } catch {
            _ = engine.endLockFreePass()
            throw error
        }
        engine.beginLockFreeBody()
        let first = Result { () throws(FolioError) in try located(body) }
        // A pass that loaded files (or put them off) is not the answer, whatever it returned.
        if engine.endLockFreePass() { return try first.get() }
        try await lock.acquire(exclusive: false)
        defer { lock.release(exclusive: false) }
        try engine.refreshJournal()
        return try located(body)
    }

    /// Adopts the hand edits reads have found, in a transaction of their own; once that is
    /// durable, each adopted save is kept as Folio's version of its file.
    func adoptEdits() async throws {
        let adopted = try await commitWrite { engine in
            // The journal was refreshed: a save another process adopted meanwhile is skipped.
            let committed = try engine.commit(Transaction(engine: engine))
            // Only a save that is now exactly the committed state (not merged, nothing else
            // pending). One adopted before and not yet checkpointed is kept already: keeping the
            // same bytes again changes nothing.
            return (engine.adoptedSavesAsCommitted, committed)
        }
        for partition in adopted { engine.keepAdoptedSaveAsFolios(partition) }
    }

    /// Throws if closed; reloads from disk if a failed sync made the in-memory state unknown.
    func prepare() async throws {
        guard !isClosed else { throw FolioError(.storeClosed, "the store at \(url.path) is closed") }
        guard needsReload, readOnlyReason == nil else { return }
        try await acquireWriterLock()
        defer { releaseWriterLock() }
        // Another operation may have rebuilt the state while this one waited for the lock: a
        // second rebuild would diff against the first one's state and lose what it noted.
        guard needsReload, !isClosed else { return }
        engine.close()
        let fresh = try StoreEngine(
            fileSystem: fileSystem, log: configuration.logHandler, cacheBudget: configuration.partitionCacheBudget,
            feed: feed)
        fresh.takeSettings(of: engine)
        // The old state announced what it took in: the new one takes it in again unannounced, then
        // announces what differs from what observers were told (commits the old one never read).
        // The feed forgets the old state only once the new one recovered: a recovery that fails
        // (the disk still failing) leaves everything for the next attempt.
        let observed = feed.isTracking
        var told = observed ? engine.toldObservers(except: feed.failedChanges) : [:]
        try feed.withoutTracking { () throws(FolioError) in
            // Other processes' commits the old state never read, to partitions it never held:
            // what observers were told of those is the file before them.
            if observed {
                try fresh.refreshJournal()
                told.merge(fresh.toldOfUnheldPartitions(pastRecords: fresh.recordsAlsoTaken(by: engine), told: told)) { kept, _ in kept }
            }
            try Self.recover(fresh)
        }
        feed.deliver(feed.stateReplaced())
        fresh.announceDifferences(from: told)
        engine = fresh
        needsReload = false
        // What the rebuild found happened before the operation that asked for it, and must not
        // be taken for part of it (a commit that then fails keeps its own changes aside).
        publishChanges()
    }
}

extension Store {
    /// Runs a read's body; a decoding failure is given its line and column (a file read, on the
    /// error path only).
    func located<T>(_ body: (StoreEngine) throws(FolioError) -> T) throws(FolioError) -> T {
        do throws(FolioError) { return try body(engine) } catch { throw engine.locatingDecodingFailure(error) }
    }
}
