public import Foundation

extension Store {
    /// Summarises a store's folder without opening it and without writing anything.
    ///
    /// By default a quick look whose cost does not grow with the outbox: the collections and
    /// their entity counts (from the saved id index where a file is unchanged, else from the
    /// file), the journal, how many commands are pending and the first `pendingLimit` of them (only
    /// their files are read), the failed commands, the quarantined files, the last sync. It
    /// checks only what it reads (``StoreStatus/problems``); `verify: true` adds the full check of
    /// every data and command file that ``verify(at:progress:)`` makes (its cost grows with the
    /// store and the outbox).
    ///
    /// Like every reader it takes the readers' shared lock while it reads, when the lock file
    /// exists (it never creates one): a checkpoint or a commit of another process waits for it.
    /// - Parameters:
    ///   - url: The store's folder.
    ///   - verify: Whether to check every file too (``StoreStatus/verification``).
    ///   - pendingLimit: How many pending commands ``StoreStatus/pending`` holds at most, from the
    ///     head of the queue: ``StoreStatus/defaultPendingLimit`` (50) unless told otherwise; `nil`
    ///     for every one (each command file is then read).
    /// - Returns: Collections, outbox, journal and sync state, as the files and the journal hold them.
    /// - Throws: ``FolioError`` with ``FolioError/Code/io`` if the folder (or a command file that is
    ///   there) cannot be read, ``FolioError/Code/unsupportedFormat`` if it is not a Folio store.
    public static func status(
        at url: URL, verify: Bool = false, pendingLimit: Int? = StoreStatus.defaultPendingLimit
    ) async throws -> StoreStatus {
        let scan = FolderScan(root: url)
        let limit = max(0, pendingLimit ?? Int.max)
        let outbox: FolderScan.OutboxGlance?
        if verify {
            try await scan.run()
            outbox = FolderScan.OutboxGlance(
                head: Array(scan.outbox.pending.prefix(limit)), pendingCount: scan.outbox.pendingSequences.count,
                failed: scan.outbox.failed, unreadable: [])
        } else {
            outbox = try await scan.glance(headLimit: limit)
        }
        guard scan.isStore, let outbox else {
            throw FolioError(.unsupportedFormat, "not a Folio store: there is no folio.json", path: url.path)
        }
        return StoreStatus(scan: scan, outbox: outbox, verified: verify)
    }
}

extension StoreStatus {
    /// The status a scan read (``FolderScan/run(lock:)`` when `verified`, else
    /// ``FolderScan/glance(headLimit:)``).
    init(scan: FolderScan, outbox: FolderScan.OutboxGlance, verified: Bool) {
        var granularities: [String: PartitionGranularity] = scan.collections.mapValues(\.granularity)
        for change in scan.records.flatMap(\.changes) where granularities[change.address.collection] == nil {
            granularities[change.address.collection] = change.address.granularity
        }
        let committed = scan.committedPartitions()
        let collections = granularities.sorted { $0.key < $1.key }.map { name, granularity -> StoreStatus.Collection in
            let partitions = committed[name] ?? [:]
            let keys = partitions.keys.sorted()
            return StoreStatus.Collection(
                name: name, granularity: granularity, partitions: partitions.count,
                entities: partitions.values.reduce(0, +),
                firstPartition: granularity == .none ? nil : keys.first?.text,
                lastPartition: granularity == .none ? nil : keys.last?.text)
        }
        // A command file that could not be read is a problem; one in outbox/quarantine/ is listed
        // in `quarantined` already.
        var problems = scan.problems
        for error in outbox.unreadable where !(error.path ?? "").hasPrefix(OutboxBook.quarantineFolder + "/") {
            problems.append(
                StoreProblem(
                    .error, .outboxCommand, path: error.path ?? OutboxBook.folder, line: error.line, column: error.column,
                    message: error.message + "; the store quarantines it and sends nothing from it on"))
        }
        // One from the journal that is not a command becomes a problem instead of a hole.
        var commandJSON: [UInt64: JSONValue] = [:]
        func command(_ sequence: UInt64, _ json: JSONValue, folder: String) -> OutboxCommand? {
            do {
                let command = try OutboxCommand(json: json, path: scan.commandFiles[sequence] ?? folder + "/" + CommandFileName.name(sequence))
                commandJSON[sequence] = json
                return command
            } catch {
                problems.append(
                    StoreProblem(.error, .outboxCommand, path: error.path ?? StoreLayout.journal, message: "command \(sequence): \(error.message)"))
                return nil
            }
        }
        let pending = outbox.head.compactMap { command($0.sequence, $0.command, folder: OutboxBook.folder) }
        let failed = outbox.failed.compactMap { failed in
            command(failed.sequence, failed.command, folder: OutboxBook.failedFolder).map { FailedCommand(command: $0, reason: failed.reason) }
        }
        let listed = Set(pending.map(\.sequence))
        let newestSent = scan.sentArchive.max { $0.sequence < $1.sequence }
        self.init(
            storeID: scan.storeID, format: scan.format.map { Int($0) }, collections: collections,
            pendingCount: outbox.pendingCount, pending: pending, failed: failed, quarantined: scan.quarantinedFiles.sorted(),
            attempts: scan.attempts.filter { listed.contains($0.key) },
            journal: StoreStatus.Journal(
                bytes: scan.journal.size, pendingTransactions: scan.records.count,
                tornBytes: scan.journal.tornBytes, generation: scan.journal.header?.generation),
            lastSent: newestSent.map { StoreStatus.LastSent(sequence: $0.sequence, archivedAt: Date(timeIntervalSince1970: Double($0.modified) / 1e9)) },
            pullCursors: scan.cursors, problems: problems,
            verification: verified
                ? VerificationReport(problems: problems, filesChecked: scan.filesChecked, entitiesChecked: scan.entitiesChecked) : nil,
            commandJSON: commandJSON)
    }
}
