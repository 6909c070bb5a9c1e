public import Foundation

/// Where a store stands, read from its folder without the app's types: collections, partitions
/// and entities, the outbox (how many commands wait, the first of them, the failed ones), the
/// journal, the last sync. Made by ``Store/status(at:verify:pendingLimit:)``.
///
/// A status is a quick look: its cost does not grow with the outbox (it reads the files of the
/// first commands only). It checks only what it reads; ``verification`` holds the full check of
/// every file when it was asked for.
///
/// ## Topics
///
/// ### The outbox
/// - ``pendingCount``
/// - ``pending``
/// - ``defaultPendingLimit``
/// - ``failed``
/// - ``quarantined``
/// - ``attempts``
/// - ``commandText(_:)``
///
/// ### Checks
/// - ``problems``
/// - ``verification``
public struct StoreStatus: Sendable {
    /// One collection, as the folder (and the journal) hold it.
    public struct Collection: Sendable, Equatable {
        /// The collection's name.
        public let name: String
        /// How it is split into files.
        public let granularity: PartitionGranularity
        /// How many partitions hold entities.
        public let partitions: Int
        /// How many entities it holds, committed transactions in the journal included.
        public let entities: Int
        /// The first and last partition keys (nil for an unpartitioned or empty collection).
        public let firstPartition: String?
        /// The last partition key.
        public let lastPartition: String?
    }

    /// The journal's state.
    public struct Journal: Sendable, Equatable {
        /// The file's size in bytes (0 when missing), its free space (zeros after the records)
        /// included.
        public let bytes: Int64
        /// Committed transactions not yet written to the files.
        public let pendingTransactions: Int
        /// Bytes after the last committed record up to the last one that is not zero (a
        /// transaction cut by a crash); free space does not count.
        public let tornBytes: Int64
        /// The generation in the header (nil when the header is missing or unreadable).
        public let generation: UInt64?
    }

    /// The newest command the server acknowledged, as `outbox/sent/` keeps it.
    public struct LastSent: Sendable, Equatable {
        /// Its number.
        public let sequence: UInt64
        /// When its file was archived (the checkpoint after the acknowledgement).
        public let archivedAt: Date
    }

    /// The store's id from `folio.json`.
    public let storeID: String?
    /// The format version from `folio.json`.
    public let format: Int?
    /// The collections, by name.
    public let collections: [Collection]
    /// How many pending commands ``Store/status(at:verify:pendingLimit:)`` lists unless told
    /// otherwise: 50, the head of the queue.
    public static let defaultPendingLimit = 50

    /// How many commands wait to be sent: the command files in `outbox/` with the journal's
    /// records not yet checkpointed applied on top (commands enqueued, sent, failed, retried),
    /// exactly the queue the store sends.
    public let pendingCount: Int
    /// The first commands waiting to be sent, in sending order: the head of the queue, at most the
    /// `pendingLimit` given to ``Store/status(at:verify:pendingLimit:)`` (``defaultPendingLimit``
    /// unless told otherwise; every one with `nil`). ``pendingCount`` says how many wait in all.
    public let pending: [OutboxCommand]
    /// The commands that can never succeed, in `outbox/failed/`.
    public let failed: [FailedCommand]
    /// Files in `outbox/quarantine/` and `.folio/quarantine/`, relative to the folder.
    public let quarantined: [String]
    /// Failed send attempts of the commands in ``pending`` (`.folio/attempts.json`), by command
    /// number.
    public let attempts: [UInt64: CommandAttempts]
    /// The journal.
    public let journal: Journal
    /// The newest sent command still archived, if any.
    public let lastSent: LastSent?
    /// The cursor of each collection's last changes pull (`.folio/sync.json`).
    public let pullCursors: [String: String]
    /// What the status met while reading what it shows: a data file that does not parse, an
    /// unreadable command file at the head of the queue or among the failed ones, a damaged
    /// journal or machinery file. It is no full check: with ``verification``, it holds the same
    /// problems as the report.
    public let problems: [StoreProblem]
    /// What ``Store/verify(at:progress:)`` finds in the same folder, when the status was asked to
    /// verify (`verify: true`); nil otherwise.
    public let verification: VerificationReport?

    let commandJSON: [UInt64: JSONValue]

    /// A command's file content, in Folio's canonical JSON form: one of ``pending`` or ``failed``.
    /// - Parameter sequence: The command's number.
    /// - Returns: The JSON text, or nil when neither ``pending`` nor ``failed`` holds a command
    ///   with this number (a pending one past the head is not there: ask for it with a larger
    ///   `pendingLimit`).
    public func commandText(_ sequence: UInt64) -> String? {
        commandJSON[sequence].map { String(decoding: JSONWriter.pretty($0), as: UTF8.self) }
    }
}
