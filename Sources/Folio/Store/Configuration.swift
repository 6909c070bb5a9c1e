internal import Foundation

/// What a `write` promises when it returns. Like SQLite's `synchronous` setting.
public enum Durability: Sendable, Equatable {
    /// `write` returns after the transaction's journal record is on stable storage (fdatasync,
    /// or `F_FULLFSYNC` on Apple platforms). A crash or power cut at any later instant keeps it.
    /// Concurrent writes share one sync (group commit). The default.
    case full
    /// `write` returns once the record is in the operating system's cache; the journal is synced
    /// at the next checkpoint (at most ``Store/Configuration/checkpointDelay`` after writes
    /// stop). A kill -9 of the app loses nothing; a power cut or kernel crash may lose the last
    /// transactions, always whole ones and always the most recent, and never corrupts anything.
    case relaxed
}

extension Store {
    /// How a store behaves. The defaults suit an app.
    public struct Configuration: Sendable {
        /// What a returning `write` promises. Default ``Durability/full``.
        public var durability: Durability = .full
        /// How long after the last write the partition files are brought up to date (the
        /// checkpoint). Until then the journal holds the changes and reads are served from memory;
        /// a person reading the folder sees current files at most this long after writes stop.
        /// Default 1 second.
        public var checkpointDelay: Duration = .seconds(1)
        /// The journal size that triggers a checkpoint even while writes continue. Default 4 MiB.
        public var checkpointThreshold: Int = 4 << 20
        /// Receives Folio's log messages (files it could not read, temp files it removed…).
        public var logHandler: LogHandler?
        /// While the store is observed, how often it checks the files it has read for changes
        /// made outside this process, where the platform's file-system watcher cannot tell it
        /// (Apple platforms: files edited in place). On Linux inotify reports every change and
        /// this is not used. Default 2 seconds.
        public var outsideChangePollInterval: Duration = .seconds(2)
        /// Opens the store without writing anything: no lock file, no checkpoint, no temp files;
        /// the journal's committed transactions are applied in memory. Writes and checkpoints throw
        /// ``FolioError/Code/readOnly``. For a widget, a backup job, or a folder on a read-only
        /// mount (Folio opens those read-only by itself, with a warning to the log handler).
        /// Default false.
        public var readOnly = false
        /// The app's schema history. Opening runs its pending migrations (all or nothing) and
        /// refuses a store migrated by a newer version of the app. Default nil: no schema check.
        public var migrator: Migrator?
        /// Called when this process adopts a person's save of data files (a hand edit, FORMAT.md
        /// "Editing by hand"), inside the transaction that adopts it: recompute derived data there
        /// (a summary of the edited days), and it commits atomically with the edit. The change
        /// sets say which entities the edit inserted, updated or deleted (origin
        /// ``ChangeSet/Origin/outsideEdit``). Runs in the process that noticed the edit, by a read,
        /// a write, a checkpoint or the watcher, once per edit. Use the transaction only; do not
        /// call the store. If it throws, the error is logged and the edit is adopted without
        /// its changes. Default nil.
        public var onOutsideEdit: OutsideEditHook?
        /// The most memory, in bytes (estimated from their JSON and decoded values), that the
        /// partitions a process has read may occupy. Beyond it the least recently used are
        /// dropped and read again from their files when next needed; a query over years of data
        /// keeps at most this much of them. Partitions that must stay are never dropped, and may
        /// exceed the budget alone: those with committed changes not yet checkpointed into their
        /// files, a person's save not yet adopted or not yet made Folio's version, a broken file
        /// whose last good state is served, and every partition while the store is observed
        /// (``Store/changes()``, ``Store/observe(_:)``). 0 keeps only those (and the partition in
        /// use): the smallest footprint, for a widget or an extension, at the cost of reading a
        /// file on every access. Default 16 MiB (``defaultPartitionCacheBudget``): a year or two of
        /// day files of a todo app.
        public var partitionCacheBudget: Int = initialPartitionCacheBudget
        /// Per collection name, which side wins a field that both a save of a data file and Folio
        /// changed since the save's base (``EditConflictRule``); collections not named here use
        /// ``EditConflictRule/fileFirst``.
        public var editConflictRules: [String: EditConflictRule] = [:]
        /// How long the history of each data file (`.folio/versions/`) keeps a version: a save
        /// made from a buffer loaded up to this long ago is merged against exactly the version it
        /// was made from (FORMAT.md, "Editing by hand"). Default 30 days.
        public var historyRetention: Duration = KeptVersions.defaultRetention
        /// The most bytes the history of one data file keeps: beyond it the oldest versions go
        /// first, even inside ``historyRetention`` (logged as a warning). Default 64 MiB.
        public var historyByteLimit: Int = KeptVersions.defaultByteLimit
        var ioHook: IOHook?

        /// The default ``partitionCacheBudget``: 16 MiB. (Reading ten years of todos day by day then
        /// grows a process by about 18 MiB, against 13 MiB for the same rows in SQLite; BENCHMARKS.md.)
        public static let defaultPartitionCacheBudget = 16 << 20

        /// In debug builds, `FOLIO_PARTITION_CACHE_BUDGET` overrides the default, so the whole test
        /// suite can run with a tiny cache.
        static var initialPartitionCacheBudget: Int {
            #if DEBUG
            if let text = ProcessInfo.processInfo.environment["FOLIO_PARTITION_CACHE_BUDGET"], let budget = Int(text) { return budget }
            #endif
            return defaultPartitionCacheBudget
        }

        /// The type of ``onOutsideEdit``: the edit's change sets, one per collection, and the
        /// transaction adopting it.
        public typealias OutsideEditHook = @Sendable (_ edits: [ChangeSet], _ transaction: Transaction) throws -> Void

        /// Creates the default configuration.
        public init() {}

        /// Creates a configuration.
        /// - Parameters:
        ///   - durability: What a returning `write` promises.
        ///   - logHandler: Receives Folio's log messages.
        public init(durability: Durability, logHandler: LogHandler? = nil) {
            self.durability = durability
            self.logHandler = logHandler
        }
    }
}
