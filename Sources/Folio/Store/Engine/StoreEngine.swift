/// The store's state and every synchronous operation on it: the coordinator of its parts. Owned
/// by the ``Store`` actor, which is the only one to call it; all locking and waiting happens in
/// the actor, all I/O decisions here.
///
/// The committed state is: the partition files, plus the records of the journal's current
/// generation applied on top, in order. Each part owns a piece of that state behind operations
/// named for what they do, and is tested alone (ARCHITECTURE.md, "Components: the parts of the store's
/// state"); ``apply(_:origin:)`` is the one place a record reaches them all. This process's place
/// in the journal (``JournalCursor``) advances on every ``refreshJournal()``, so another
/// process's commits become visible at the next read.
final class StoreEngine {
    let fileSystem: FileSystem
    let coder = EntityCoder()
    let log: LogHandler?

    // MARK: Parts

    /// This process's place in the journal: the header, the records applied, where they end
    /// (Journal/JournalCursor.swift).
    let cursor: JournalCursor
    var journal: Journal { cursor.journal }
    /// Where the records this process has taken in end: what a sync of the journal makes durable.
    var journalEnd: Int64 { cursor.readOffset }
    /// The journal's header as last read (nil: none yet).
    var journalHeader: Journal.Header? { cursor.header }
    /// How many records of the current generation this process has taken in.
    var journalRecordCount: Int { cursor.records.count }
    /// The number the next transaction gets.
    var nextTransaction: UInt64 { cursor.nextTransaction }
    /// Bytes past the last whole record (a tail that never committed).
    func journalBytesPastRecords() throws(FolioError) -> Int64 { try cursor.bytesPastCursor() }
    /// Makes the journal's bytes durable.
    func syncJournal() throws(FolioError) { try journal.sync() }
    /// The journal's syncer, for a sync outside the actor.
    var journalSyncer: Journal.Syncer { journal.syncer }
    /// Cuts the journal back to `end` (records past it never became durable).
    func truncateJournal(to end: Int64) throws(FolioError) { try journal.truncate(to: end) }
    /// How many commands were queued in the outbox.
    var queuedCommandCount: Int { outbox.queuedCommands }
    /// The outbox, read from its files on first use (``OutboxBook/loaded()``).
    func loadedOutbox() throws(FolioError) -> OutboxState { try outbox.loaded() }
    /// Where each entity stands with the server (``OutboxBook/syncStatuses(collection:ids:)``).
    func syncStatuses(collection: String, ids: [String]) throws(FolioError) -> [String: EntitySyncStatus] {
        try outbox.syncStatuses(collection: collection, ids: ids)
    }
    /// An entity's commands the server has not acknowledged, pending or failed
    /// (``OutboxBook/unacknowledged(collection:id:indexed:)``).
    func unacknowledged(collection: String, id: String) throws(FolioError) -> [(sequence: UInt64, location: OutboxState.Location)] {
        try outbox.unacknowledged(collection: collection, id: id)
    }
    /// An entity's pending commands, in order (``OutboxBook/pending(collection:id:)``).
    func pendingCommands(collection: String, id: String) throws(FolioError) -> [(sequence: UInt64, command: JSONValue)] {
        try outbox.pending(collection: collection, id: id)
    }
    /// The first pending commands, how many are pending and the unreadable command files
    /// (``OutboxBook/head(limit:)``).
    func queueHead(limit: Int) throws(FolioError) -> (commands: [(sequence: UInt64, command: JSONValue)], pendingCount: Int, quarantined: [FolioError]) {
        try outbox.head(limit: limit)
    }
    /// Where one command is, reading only its file when the outbox was not read
    /// (``OutboxBook/location(of:)``).
    func outboxLocation(of sequence: UInt64) throws(FolioError) -> OutboxState.Location { try outbox.location(of: sequence) }
    /// The number the next enqueued command gets.
    func nextSequence() throws(FolioError) -> UInt64 { try outbox.nextSequence() }
    /// Commands up to this number may have reached the server (``OutboxBook/sentThrough()``).
    func sentThrough() throws(FolioError) -> UInt64 { try outbox.sentThrough() }
    /// Records durably that the leading pending commands of `sequences` may be sent
    /// (``OutboxBook/markMaySend(_:)``).
    /// - Returns: How many of the leading ones are still pending: only those may be sent.
    func markMaySend(_ sequences: [UInt64]) throws(FolioError) -> Int { try outbox.markMaySend(sequences) }
    /// The partitions in memory that cannot be read.
    var unreadablePartitions: [Partition] { partitions.partitions.filter { $0.unreadable != nil } }
    /// Saves adopted by the last commit that are exactly the committed state (nothing else
    /// pending): kept as Folio's versions of their files once the commit is durable.
    var adoptedSavesAsCommitted: [Partition] { partitions.partitions.filter { $0.adoptedSave && !$0.isDirty } }

    /// Takes the settings of the state this one replaces (a reload after a failed sync): ids,
    /// history limits, conflict rules, the outside-edit hook, collections' sync modes.
    func takeSettings(of old: StoreEngine) {
        settings = old.settings
        for (collection, mode) in old.outbox.syncModes { outbox.register(mode, for: collection) }
    }
    /// The partitions read, within the configured byte budget (PartitionCache.swift).
    let partitions: PartitionCache
    /// For partitioned collections: where each id lives, built on first need, with the files it
    /// could not read and the ids held twice (Store/Locator/IdLocator.swift). It asks this engine
    /// for partitions (``PartitionSource``).
    private(set) lazy var locator = IdLocator(source: self, fileSystem: fileSystem, log: log)
    /// The outbox: its commands (read on first use), sync modes, in-flight mark, queued count,
    /// the sent mark and the command files (Outbox/OutboxBook.swift).
    let outbox: OutboxBook
    /// What observers are told, and whether anyone observes (Observation/ChangeFeed.swift): the
    /// ``Store`` actor's, shared with each state it builds.
    let feed: ChangeFeed
    /// Saves by a person that Folio read and has not adopted yet (Store/History/HandEdits.swift; adopted
    /// by StoreEngine+HandEdits.swift).
    let handEdits = HandEdits()

    // MARK: What ties them together

    /// Partitions the journal's current records change (the cursor's): what the next checkpoint
    /// must write.
    var touched: Set<PartitionAddress> { cursor.touched }
    /// The changes the journal's current records make to one partition, in order.
    func journalChanges(at address: PartitionAddress) -> [JournalRecord.Change] {
        cursor.records.flatMap { $0.changes.filter { $0.address == address } }
    }
    /// What this state was opened with (``StoreSettings``).
    private(set) var settings = StoreSettings(storeID: "")
    var storeID: String { settings.storeID }
    var writerID: String { settings.writerID }
    /// The prefix of new commands' ids.
    var commandIDPrefix: String { settings.commandIDPrefix }
    /// Uses these settings (opening).
    func use(_ settings: StoreSettings) { self.settings = settings }
    /// Takes this folder instance's writer id (a read-write open ensured it).
    func adoptWriterID(_ id: String) { settings.writerID = id }

    /// What reads did (``ReadStatistics``).
    private(set) var statistics = ReadStatistics()
    /// The collections registered by this process, with their partitioning.
    private(set) var collections: [String: PartitionGranularity] = [:]
    /// A read's first, unlocked pass (``ReadPass``): a read that must load a file leaves it for
    /// the locked pass that loading any file causes.
    private(set) var readPass = ReadPass()

    /// A partition file was read (first load or reload).
    func noteFileLoad() {
        statistics.noteFileLoad()
        readPass.noteFileLoad()
    }
    /// A query scanned a partition file field by field.
    func notePartitionScanned() { statistics.noteScanned() }
    /// A query filtered a partition on the field index.
    func notePartitionFromFieldIndex(fromColumns: Bool) {
        statistics.noteFromFieldIndex()
        if fromColumns { statistics.noteFromColumns() }
    }

    /// A lock-free read pass begins, before it catches up with the journal.
    func beginLockFreePass() { readPass.begin() }
    /// The pass's body begins: from here, file loads are put off to the locked pass.
    func beginLockFreeBody() { readPass.beginBody() }
    /// The pass ends. Returns whether it is the answer: it touched no file.
    func endLockFreePass() -> Bool { readPass.end() }
    /// A read needed a file and left it for the locked pass.
    func putOffFileLoad() { readPass.putOffFileLoad() }

    /// Records a collection registered by this process (``register(_:)``).
    func noteRegistered(_ collection: String, granularity: PartitionGranularity, syncMode: SyncMode) {
        collections[collection] = granularity
        outbox.register(syncMode, for: collection)
    }
    /// What checkpoints last wrote to each file (`.folio/written`), to know Folio's own files
    /// without listing their kept versions.
    let writtenHashes = WrittenHashesCache()
    /// The history of each data file: merges of saves, revisions, kept versions
    /// (Store/History/VersionHistory.swift). It reads the settings through ``HistoryContext``.
    private(set) lazy var history = VersionHistory(
        context: self, fileSystem: fileSystem, log: log, isReadOnly: isReadOnly,
        writtenHashes: writtenHashes)
    /// The merges this process made that the app may show (``Store/mergeReports()``).
    var mergeReports: [MergeReport] { history.mergeReports.reports }
    /// Each data file's kept versions (``Store/history(of:)``, ``Store/restore(_:to:)``).
    var keptVersions: KeptVersions { history.keptVersions }
    /// Each collection's field index: queries read it, and what they found to change waits there
    /// until ``saveFieldIndexes()`` (Store/FieldIndex/FieldIndex.swift).
    let fieldIndex: FieldIndex
    /// Whether queries left field index changes to save.
    var hasUnsavedFieldIndexChanges: Bool { fieldIndex.hasUnsavedChanges }
    /// Saves what queries found to change in the field index. Failures are only reported: the
    /// index is derived data.
    func saveFieldIndexes() {
        for problem in fieldIndex.saveUnsaved() {
            report(.warning, "could not save the field index (it is rebuilt when needed): \(problem.message)", path: problem.path)
        }
    }
    /// Entities that do not decode, already reported (type, path, id and stored JSON), so that
    /// reading a partition again after it left memory does not report them again.
    private var reportedUndecodable: Set<String> = []
    /// Whether an undecodable entity is reported for the first time (then it counts as reported).
    func isFirstReport(ofUndecodable key: String) -> Bool { reportedUndecodable.insert(key).inserted }

    /// Opened read-only: nothing is written, kept versions included (VersionHistory).
    let isReadOnly: Bool

    init(
        fileSystem: FileSystem, log: LogHandler?, readOnly: Bool = false,
        cacheBudget: Int = Store.Configuration.initialPartitionCacheBudget, feed: ChangeFeed = ChangeFeed()
    ) throws(FolioError) {
        self.fileSystem = fileSystem
        self.feed = feed
        self.log = log
        self.isReadOnly = readOnly
        self.cursor = JournalCursor(journal: try Journal(fileSystem: fileSystem, readOnly: readOnly))
        self.partitions = PartitionCache(budget: cacheBudget)
        self.fieldIndex = FieldIndex(fileSystem: fileSystem, isReadOnly: readOnly)
        self.outbox = OutboxBook(fileSystem: fileSystem, log: log, journal: cursor)
        partitions.mustStay = { [unowned self] in mustStayInMemory($0) }
        partitions.onEvict = { [unowned self] in locator.noteEvicted($0) }
        partitions.holdsEverything = { [feed] in feed.isTracking }
    }

    func close() {
        journal.close()
    }

    func report(_ level: LogMessage.Level, _ text: String, path: String? = nil) {
        log?(LogMessage(level: level, text: text, path: path))
    }

    // MARK: Journal

    /// Reads what other processes (or a previous life of this one) committed since the last look,
    /// and applies it.
    func refreshJournal() throws(FolioError) {
        let current = try cursor.currentHeader()
        // While observed, a lock-free pass reads no partition file while it catches up: a file
        // read then may already hold records past those read (their process committed and
        // checkpointed them in between), which would then look like no change, and after the
        // journal's reset, like the file already held. The locked pass catches up instead: under
        // the readers' lock no checkpoint runs, so a file holds no record the journal still does.
        let putsOffLoads = feed.isTracking && readPass.catchesUp
        if putsOffLoads, current != cursor.header {
            readPass.putOffFileLoad()
            return
        }
        if current != cursor.header, let missedSince = startGeneration(current), feed.isTracking {
            // Records another process checkpointed before this one read them: observers learn
            // of them from the files that checkpoint wrote.
            do {
                // Only announcements depend on it: a failure must not fail the read or write.
                try checkFilesCheckpointed(after: missedSince)
            } catch {
                report(.warning, "could not check the files another process's checkpoint wrote: \(error.message)", path: error.path)
            }
        }
        let (records, end) = try cursor.recordsPastCursor()
        if putsOffLoads, records.contains(where: { $0.changes.contains { !partitions.contains($0.address) } }) {
            readPass.putOffFileLoad()
            return
        }
        if feed.isTracking, let first = records.first?.transaction, let last = records.last?.transaction {
            report(.debug, "read transactions \(first)–\(last) of another process", path: StoreLayout.journal)
        }
        // This read takes no lock: a file first loaded for one of these records may already hold
        // the later ones too (their process is checkpointing them), so each of them is news.
        var loadedNow: Set<PartitionAddress> = []
        for record in records { apply(record, origin: .otherProcess, loadedNow: &loadedNow) }
        cursor.advance(to: end)
    }

    /// Another process checkpointed and reset the journal (or this is the first look): the files
    /// now hold everything the old generation held, so partitions fall back to their files.
    /// - Returns: The first transaction of the records this process never read, now only in the
    ///   files (nil when it read them all, or on the first look).
    private func startGeneration(_ newHeader: Journal.Header?) -> UInt64? {
        var missedSince: UInt64?
        let seesEverything = cursor.seesEverything(movingTo: newHeader)
        if feed.isTracking {
            report(
                .debug,
                "the journal's generation changed (\(cursor.header.map { String($0.generation) } ?? "none") → \(newHeader.map { String($0.generation) } ?? "none")); "
                    + (seesEverything ? "every record was read" : "records from transaction \(cursor.nextTransaction) on were not read"),
                path: StoreLayout.journal)
        }
        if !seesEverything {
            if cursor.header != nil {
                feed.noteMissedOtherProcessRecords()
                missedSince = cursor.nextTransaction
            }
            // Records this process never saw are now in files it may not have loaded: forget
            // where ids live, and rebuild that on demand.
            locator.forgetLocations()
        }
        var held: [PartitionAddress] = []
        for address in touched {
            guard let partition = partitions.peek(address) else { continue }
            // What observers were told is the committed state; the file may catch up later.
            feed.keepAnnouncement(partition.entities, of: address)
            partition.resetToBase()
            held.append(address)
        }
        outbox.forgetCommands()
        cursor.start(newHeader)
        // The checkpoint that reset the journal rewrote the files of its records: a partition
        // held from an older file is read again now, not when a read next looks, because a write
        // takes a held partition as it is (so that a change to a broken file waits in the
        // journal), and would build its record and its commands' base versions on a stale state.
        // Records this process never read rewrote files it cannot name: every held partition.
        for address in seesEverything ? held : partitions.addresses { readAgainIfRewritten(address) }
        return missedSince
    }

    /// Reads a held partition's file again if it changed on disk (a broken file keeps its last
    /// good state, or its placeholder, as a read finds it).
    private func readAgainIfRewritten(_ address: PartitionAddress) {
        do {
            _ = try partition(address)
        } catch  where error.code == .corruptFile {
            // Already reported when the file was found broken; writes to it wait in the journal.
        } catch {
            report(.warning, "could not read this file again after another process's checkpoint: \(error.message)", path: address.path)
        }
    }

    /// Applies a record to every part, in this order: what it changes is noted for observers
    /// (before, so the state it changes is known), then the partitions, the id index and the
    /// outbox queue follow it, and the cursor takes it in last.
    func apply(_ record: JournalRecord, origin: ChangeSet.Origin) {
        var loadedNow: Set<PartitionAddress> = []
        apply(record, origin: origin, loadedNow: &loadedNow)
    }

    /// Applies one record of a batch; `loadedNow` gathers the partitions the batch's records
    /// loaded from their files (see ``noteChanges(of:origin:loadedNow:)``).
    func apply(_ record: JournalRecord, origin: ChangeSet.Origin, loadedNow: inout Set<PartitionAddress>) {
        noteChanges(of: record, origin: origin, loadedNow: &loadedNow)
        // A record's changes come grouped by partition: each partition is looked up once per run.
        var current: (address: PartitionAddress, partition: Partition?)?
        for change in record.changes {
            let address = change.address
            if current?.address != address {
                current = (address, partitions.peek(address))
            }
            current?.partition?.apply(change)
            feed.applied(change)
            locator.apply(change.id, at: address, exists: change.entity != nil)
        }
        outbox.apply(record.outbox)
        cursor.take(record)
    }

    /// Gives the journal a header if it has none (a new store, or a reset cut short). Only with
    /// the writers' lock held.
    func ensureJournalHeader() throws(FolioError) {
        guard cursor.header == nil else { return }
        let size = try journal.size
        if size > Int64(Journal.headerSize) || (size > 0 && size < Int64(Journal.headerSize)) {
            report(
                .warning, "journal header unreadable; starting a new journal (its records, if any, were already applied)",
                path: StoreLayout.journal)
        }
        let fresh = cursor.nextGeneration(UInt64.random(in: 1...UInt64(UInt32.max)), nextSequence: try nextSequence())
        try journal.reset(to: fresh)
        _ = startGeneration(fresh)   // this process's own reset: it read every record
        outbox.saveEntityIndexIfOutboxEmpty(generation: fresh.generation)
    }
}
