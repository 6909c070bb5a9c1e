public import Foundation

/// Where a store stands, read from its folder without the app's types: collections, partitions
/// and entities, the outbox, the journal, the last sync. Made by ``Store/status(at:)``.
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
    /// The commands waiting to be sent, in sending order.
    public let pending: [OutboxCommand]
    /// The commands that can never succeed, in `outbox/failed/`.
    public let failed: [FailedCommand]
    /// Files in `outbox/quarantine/` and `.folio/quarantine/`, relative to the folder.
    public let quarantined: [String]
    /// Failed send attempts of pending commands (`.folio/attempts.json`), by command number.
    public let attempts: [UInt64: CommandAttempts]
    /// The journal.
    public let journal: Journal
    /// The newest sent command still archived, if any.
    public let lastSent: LastSent?
    /// The cursor of each collection's last changes pull (`.folio/sync.json`).
    public let pullCursors: [String: String]
    /// What ``Store/verify(at:progress:)`` finds in the same folder.
    public let verification: VerificationReport

    let commandJSON: [UInt64: JSONValue]

    /// A command's file content, pending or failed, in Folio's canonical JSON form.
    /// - Parameter sequence: The command's number.
    /// - Returns: The JSON text, or nil when no pending or failed command has this number.
    public func commandText(_ sequence: UInt64) -> String? {
        commandJSON[sequence].map { String(decoding: JSONWriter.pretty($0), as: UTF8.self) }
    }
}

extension Store {
    /// Summarises a store's folder without opening it and without writing anything (like
    /// ``verify(at:progress:)``, whose report it includes).
    /// - Parameter url: The store's folder.
    /// - Returns: Collections, outbox, journal and sync state, as the files and the journal hold them.
    /// - Throws: ``FolioError`` with ``FolioError/Code/io`` if the folder cannot be read,
    ///   ``FolioError/Code/unsupportedFormat`` if it is not a Folio store.
    public static func status(at url: URL) async throws -> StoreStatus {
        let scan = FolderScan(root: url)
        try await scan.run()
        guard scan.isStore else {
            throw FolioError(.unsupportedFormat, "not a Folio store: there is no folio.json", path: url.path)
        }
        var granularities: [String: PartitionGranularity] = scan.collections.mapValues(\.granularity)
        for record in scan.records {
            for change in record.changes where granularities[change.address.collection] == nil {
                granularities[change.address.collection] = change.address.granularity
            }
        }
        let committed = scan.committedPartitions()
        let collections = granularities.keys.sorted().map { name -> StoreStatus.Collection in
            let partitions = committed[name] ?? [:]
            let keys = partitions.keys.sorted()
            let granularity = granularities[name]!
            return StoreStatus.Collection(
                name: name, granularity: granularity, partitions: partitions.count,
                entities: partitions.values.reduce(0, +),
                firstPartition: granularity == .none ? nil : keys.first?.text,
                lastPartition: granularity == .none ? nil : keys.last?.text)
        }
        // Commands from files were checked by the scan; one from the journal that is not a
        // command becomes a problem of the report instead of a hole in the list.
        var problems = scan.problems
        var commandJSON: [UInt64: JSONValue] = [:]
        var pending: [OutboxCommand] = []
        var failed: [FailedCommand] = []
        func command(_ sequence: UInt64, _ json: JSONValue) -> OutboxCommand? {
            do {
                let command = try OutboxCommand(json: json, path: scan.commandFiles[sequence] ?? StoreLayout.journal)
                commandJSON[sequence] = json
                return command
            } catch {
                problems.append(
                    StoreProblem(
                        .error, .outboxCommand, path: error.path ?? StoreLayout.journal,
                        message: "command \(sequence): \(error.message)"))
                return nil
            }
        }
        for (sequence, json) in scan.outbox.pending {
            if let command = command(sequence, json) { pending.append(command) }
        }
        for (sequence, json, reason) in scan.outbox.failed {
            if let command = command(sequence, json) { failed.append(FailedCommand(command: command, reason: reason)) }
        }
        let pendingSet = Set(scan.outbox.pendingSequences)
        let newestSent = scan.sentArchive.max { $0.sequence < $1.sequence }
        return StoreStatus(
            storeID: scan.storeID, format: scan.format.map { Int($0) }, collections: collections,
            pending: pending, failed: failed, quarantined: scan.quarantinedFiles.sorted(),
            attempts: scan.attempts.filter { pendingSet.contains($0.key) },
            journal: StoreStatus.Journal(
                bytes: scan.journal.size, pendingTransactions: scan.journal.pendingTransactions,
                tornBytes: scan.journal.tornBytes, generation: scan.journal.generation),
            lastSent: newestSent.map { StoreStatus.LastSent(sequence: $0.sequence, archivedAt: Date(timeIntervalSince1970: Double($0.modified) / 1e9)) },
            pullCursors: scan.cursors,
            verification: VerificationReport(problems: problems, filesChecked: scan.filesChecked, entitiesChecked: scan.entitiesChecked),
            commandJSON: commandJSON)
    }
}
