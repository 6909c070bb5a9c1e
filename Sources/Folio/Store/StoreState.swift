/// The store's state and every synchronous operation on it. Owned by the ``Store`` actor, which
/// is the only one to call it; all locking and waiting happens in the actor, all I/O decisions
/// here.
///
/// The committed state is: the partition files, plus the records of the journal's current
/// generation applied on top, in order. This process's view of the journal (`header`,
/// `readOffset`, `records`) advances on every ``refreshJournal()``, so another process's commits
/// become visible at the next read.
final class StoreState {
    let fileSystem: FileSystem
    let coder = EntityCoder()
    let log: LogHandler?
    let journal: Journal

    /// The journal header this process last read, or nil if the journal holds none yet.
    var header: Journal.Header?
    /// Offset just past the last record applied.
    var readOffset = Int64(Journal.headerSize)
    /// The records of the current generation, applied, in order.
    var records: [JournalRecord] = []
    /// The transaction number after the last one seen (survives generation changes).
    var nextTransaction: UInt64 = 1
    /// Partitions touched by `records`: what the next checkpoint must write.
    var touched: Set<PartitionAddress> = []
    /// The partitions read, within the configured byte budget (PartitionCache.swift).
    let partitions: PartitionCache
    /// Counts partition files read (first loads and reloads), so a reader can tell whether it
    /// touched the disk and must redo its read under the shared lock.
    var fileLoads = 0
    /// How many partition files queries read field by field without loading them (a field filter).
    var partitionsScanned = 0
    var collections: [String: PartitionGranularity] = [:]
    /// For partitioned collections: where each id lives. Built on first need.
    var indexes: [String: [String: PartitionKey]] = [:]
    /// The outbox, loaded on first use (nil until then, and after another process's checkpoint).
    var outbox: OutboxState?
    /// The sync mode of each collection registered by this process.
    var syncModes: [String: SyncMode] = [:]
    /// Commands up to this number may be on their way to the server: never coalesce them.
    var inFlightThrough: UInt64 = 0
    /// How many commands records put into the queue (new or retried) since the state was made:
    /// the sync engine is nudged when it grows.
    var queuedCommands = 0
    /// The store's id, from `folio.json` (the first half of every command id).
    var storeID = ""
    /// Partitions the index could not read (broken files), with why.
    var unindexed: [String: [PartitionAddress: FolioError]] = [:]
    /// Ids found in more than one partition file of a collection, with the keys of those files
    /// (StoreState+Duplicates.swift).
    var duplicates: [String: [String: Set<PartitionKey>]] = [:]
    /// Identities of the partition files whose ids came from `.folio/index/` (not read).
    var indexIdentities: [String: [PartitionKey: FileIdentity]] = [:]
    /// Collections whose id index changed since it was last saved.
    var indexDirty: Set<String> = []
    /// Set by ``Store`` during a read's first, unlocked pass: a query that must load many files
    /// leaves them for the locked pass that loading any file causes (StoreState+Scan.swift).
    var defersFileLoads = false
    /// Whether to note what changes (someone observes the store); see StoreState+Changes.swift.
    var tracksChanges = false
    /// The changes noted and not yet delivered to observers.
    var recordedChanges: [ChangeSet] = []
    /// Set when another process checkpointed records this process never saw: files that changed
    /// then are its doing, not an outside edit (cleared after each read).
    var missedOtherProcessRecords = false
    /// Saves by a person that Folio read and has not adopted yet (StoreState+HandEdits.swift).
    var pendingEdits: [PartitionAddress: HandEdit] = [:]
    /// Saves met during a compare-and-swap, merged into Folio's versions, still to adopt.
    var absorbedEdits: [PartitionAddress: HandEdit] = [:]
    /// The app's hook for recomputing derived data after outside edits (see
    /// ``Store/Configuration/onOutsideEdit``).
    var onOutsideEdit: Store.Configuration.OutsideEditHook?
    /// The checkpoint's appends to `.folio/written`, while a checkpoint writes files
    /// (StoreState+WrittenLog.swift).
    var writtenAppender: WrittenLog.Appender?
    /// Files that are not data, already reported to the log.
    var reportedStrays: Set<String> = []
    /// Entities that do not decode, already reported (type, path, id and stored JSON), so that
    /// reading a partition again after it left memory does not report them again.
    var reportedUndecodable: Set<String> = []

    /// Opened read-only: nothing is written, kept versions included (StoreState+KeptVersions).
    let isReadOnly: Bool

    init(fileSystem: FileSystem, log: LogHandler?, readOnly: Bool = false,
         cacheBudget: Int = Store.Configuration.initialPartitionCacheBudget) throws(FolioError) {
        self.fileSystem = fileSystem
        self.log = log
        self.isReadOnly = readOnly
        self.journal = try Journal(fileSystem: fileSystem, readOnly: readOnly)
        self.partitions = PartitionCache(budget: cacheBudget)
        partitions.mustStay = { [unowned self] in mustStayInMemory($0) }
        partitions.onEvict = { [unowned self] in forgetEvicted($0) }
        partitions.holdsEverything = { [unowned self] in tracksChanges }
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
        let current = try journal.readHeader()
        if current == nil { try journal.checkHeader() }
        if current != header {
            startGeneration(current)
        }
        guard let header else { return }
        let result = try journal.readRecords(from: readOffset, generation: header.generation,
                                             expectedTransaction: nextTransaction)
        if let damage = result.damage { throw damage.error() }
        for record in result.records { apply(record, origin: .otherProcess) }
        readOffset = result.end
    }

    /// Another process checkpointed and reset the journal (or this is the first look): the files
    /// now hold everything the old generation held, so partitions fall back to their files.
    private func startGeneration(_ newHeader: Journal.Header?) {
        let sawEverything = newHeader.map { $0.firstTransaction == nextTransaction } ?? records.isEmpty
        if !sawEverything {
            if tracksChanges && header != nil { missedOtherProcessRecords = true }
            // Records this process never saw are now in files it may not have loaded: forget
            // where ids live, and rebuild that on demand.
            indexes = [:]
            unindexed = [:]
            indexIdentities = [:]
        }
        for address in touched {
            guard let partition = partitions.peek(address) else { continue }
            // What observers were told is the committed state; the file may catch up later.
            if tracksChanges && partition.announced == nil { partition.announced = partition.entities }
            partition.resetToBase()
        }
        touched = []
        outbox = nil
        records = []
        header = newHeader
        readOffset = Int64(Journal.headerSize)
        if let newHeader { nextTransaction = max(nextTransaction, newHeader.firstTransaction) }
    }

    func apply(_ record: JournalRecord, origin: ChangeSet.Origin) {
        noteChanges(of: record, origin: origin)
        for change in record.changes {
            let address = change.address
            touched.insert(address)
            partitions.peek(address)?.apply(change)
            if indexes[address.collection] != nil {
                indexDirty.insert(address.collection)
                if change.entity != nil {
                    indexes[address.collection]![change.id] = address.key
                } else if indexes[address.collection]![change.id] == address.key {
                    indexes[address.collection]![change.id] = nil
                }
            }
        }
        if let outbox {
            for change in record.outbox { outbox.apply(change) }
        }
        for change in record.outbox {
            switch change {
            case .enqueue, .retry: queuedCommands += 1
            case .remove, .fail: continue
            }
        }
        records.append(record)
        nextTransaction = record.transaction + 1
    }

    /// Gives the journal a header if it has none (a new store, or a reset cut short). Only with
    /// the writers' lock held.
    func ensureJournalHeader() throws(FolioError) {
        guard header == nil else { return }
        let size = try journal.size
        if size > Int64(Journal.headerSize) || (size > 0 && size < Int64(Journal.headerSize)) {
            report(.warning, "journal header unreadable; starting a new journal (its records, if any, were already applied)",
                   path: StoreLayout.journal)
        }
        let fresh = Journal.Header(generation: UInt64.random(in: 1...UInt64(UInt32.max)), firstTransaction: nextTransaction,
                                   nextSequence: try nextSequence())
        try journal.reset(to: fresh)
        startGeneration(fresh)
    }

}
