import Folio
import Foundation

extension Runner {
    /// One round of every comparison `--only` left in, each contender in a fresh folder under
    /// `folder`.
    func runRound(_ round: Int, in folder: URL) async throws {
        let flip = round % 2 == 0
        if options.runs(.disk) { try runDisk(round, in: folder) }
        if options.runs(.write) { try await runWrites(round, flip: flip, in: folder) }
        if options.runs(.read) { try await runReads(round, flip: flip, in: folder) }
        if options.runs(.migrate) { try await runMigration(flip: flip, in: folder) }
        if options.runs(.tenyear) { try await runTenYears(round, flip: flip) }
        if options.runs(.growth) { try await runGrowth(round, flip: flip, in: folder) }
        if options.runs(.outbox) { try await runOutbox(round, flip: flip, in: folder) }
        if options.runs(.scanmatrix) { try runScanMatrix(round) }
        if options.runs(.drain) { try await runDrain(round, flip: flip, in: folder) }
    }

    /// 7. The disk's limits, first, with nothing else of this benchmark writing.
    private func runDisk(_ round: Int, in folder: URL) throws {
        let count = Double(options.transactions)
        let disk = folder.appendingPathComponent("disk", isDirectory: true)
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
        let appendRate = count / (try DiskLimits.appendAndSync(disk, count: options.transactions)).seconds
        record(.diskAppend, appendRate)
        record(.diskOverwrite, count / (try DiskLimits.overwriteAndSync(disk, count: options.transactions)).seconds)
        record(
            .diskReplace,
            Double(max(options.transactions / 4, 8))
                / (try DiskLimits.replaceFile(disk, count: max(options.transactions / 4, 8))).seconds)
        recordPeer(.folioFraction, appendRate)
        recordPeer(.grdbFraction, appendRate)
    }

    /// 1–4. Transactions one by one (durable, relaxed), four writers, bulk imports.
    private func runWrites(_ round: Int, flip: Bool, in folder: URL) async throws {
        let edits = workload.edits(count: options.transactions, salt: UInt64(round))
        let count = Double(edits.count)

        // 1. Durable transactions: Folio full vs GRDB WAL synchronous=FULL.
        try await pair(
            flip,
            {
                let timing = try await FolioContender.transactions(
                    try await copyInUse(folioTemplate, "durable-folio", in: folder), edits: edits, durability: .full)
                record(.durableCommit, count / timing.commit.seconds)
                record(.durableTotal, count / timing.total.seconds)
                record(.folioFraction, count / timing.commit.seconds)
            },
            {
                let timing = try GRDBContender.transactions(try copy(grdbTemplate, "durable.sqlite", in: folder).path, edits: edits, synchronous: .full)
                recordPeer(.durableCommit, count / timing.commit.seconds)
                recordPeer(.durableTotal, count / timing.total.seconds)
                record(.grdbFraction, count / timing.commit.seconds)
            })

        // 2. Relaxed: Folio relaxed vs GRDB WAL synchronous=NORMAL.
        try await pair(
            flip,
            {
                let timing = try await FolioContender.transactions(
                    try await copyInUse(folioTemplate, "relaxed-folio", in: folder), edits: edits, durability: .relaxed)
                record(.relaxedCommit, count / timing.commit.seconds)
                record(.relaxedTotal, count / timing.total.seconds)
            },
            {
                let timing = try GRDBContender.transactions(try copy(grdbTemplate, "relaxed.sqlite", in: folder).path, edits: edits, synchronous: .normal)
                recordPeer(.relaxedCommit, count / timing.commit.seconds)
                recordPeer(.relaxedTotal, count / timing.total.seconds)
            })

        // 3. Four concurrent writers, durable.
        try await pair(
            flip,
            {
                let timing = try await FolioContender.concurrentTransactions(
                    try await copyInUse(folioTemplate, "concurrent-folio", in: folder), edits: edits, writers: 4)
                record(.concurrentCommit, count / timing.commit.seconds)
                record(.concurrentTotal, count / timing.total.seconds)
            },
            {
                let timing = try await GRDBContender.concurrentTransactions(
                    try copy(grdbTemplate, "concurrent.sqlite", in: folder).path, edits: edits, writers: 4)
                recordPeer(.concurrentCommit, count / timing.commit.seconds)
                recordPeer(.concurrentTotal, count / timing.total.seconds)
            })

        // 4. Bulk import of the whole workload in one transaction, into an empty store; with the
        // outbox, also its floor (the command files created bare), before the pair in even rounds
        // and after it in odd ones.
        for outbox in [false, true] {
            let (commitKey, totalKey): (Row.Key, Row.Key) = outbox ? (.bulkOutboxCommit, .bulkOutboxTotal) : (.bulkCommit, .bulkTotal)
            let suffix = outbox ? "-outbox" : ""
            if outbox && flip { recordPeer(.bulkOutboxFloor, try bulkOutboxFloor(in: folder)) }
            try await pair(
                flip,
                {
                    let timing = try await FolioContender.bulkImport(
                        folder.appendingPathComponent("bulk-folio" + suffix, isDirectory: true),
                        todos: workload.todos, outbox: outbox)
                    record(commitKey, timing.commit.seconds * 1000)
                    record(totalKey, timing.total.seconds * 1000)
                    if outbox { record(.bulkOutboxFloor, timing.total.seconds * 1000) }
                },
                {
                    let timing = try GRDBContender.bulkImport(folder.appendingPathComponent("bulk\(suffix).sqlite").path, todos: workload.todos, outbox: outbox)
                    recordPeer(commitKey, timing.commit.seconds * 1000)
                    recordPeer(totalKey, timing.total.seconds * 1000)
                })
            if outbox && !flip { recordPeer(.bulkOutboxFloor, try bulkOutboxFloor(in: folder)) }
        }
    }

    /// 5. Reads: warm in this process, cold in a fresh one after dropping caches.
    private func runReads(_ round: Int, flip: Bool, in folder: URL) async throws {
        let days = workload.readDays(count: options.reads, salt: UInt64(round))
        try await pair(
            flip,
            {
                let (time, read) = try await FolioContender.warmReads(try await copyInUse(folioTemplate, "warm-folio", in: folder), days: days)
                guard read > 0 else { throw BenchError("Folio's warm reads found no todos") }
                record(.warmRead, time.seconds * 1e6)
            },
            {
                let (time, read) = try GRDBContender.warmReads(try copy(grdbTemplate, "warm.sqlite", in: folder).path, days: days)
                guard read > 0 else { throw BenchError("GRDB's warm reads found no todos") }
                recordPeer(.warmRead, time.seconds * 1e6)
            })
        let coldFolio = try copy(folioTemplate, "cold-folio", in: folder)
        let coldGRDB = try copy(grdbTemplate, "cold.sqlite", in: folder)
        let lastDay = workload.days[workload.days.count - 1]
        let expected = workload.todosByDay[lastDay]?.count ?? 0
        // The first open of a copied folder checks every file against the copied journal
        // (FORMAT.md, "Copying the folder"), once: measured apart, then a store in use.
        try await pair(
            flip,
            {
                record(.coldCopyRead, try coldRead("folio", coldFolio.path, day: lastDay, expected: expected).total)
            },
            {
                recordPeer(.coldCopyRead, try coldRead("grdb", coldGRDB.path, day: lastDay, expected: expected).total)
            })
        try await pair(
            flip,
            {
                record(.coldRead, try coldRead("folio", coldFolio.path, day: lastDay, expected: expected).total)
            },
            {
                recordPeer(.coldRead, try coldRead("grdb", coldGRDB.path, day: lastDay, expected: expected).total)
            })
        try await pair(
            flip,
            {
                record(.coldTenYears, try coldRead("folio", folioTenYears.path, day: tenYearDay, expected: tenYearDayTodos).total)
            },
            {
                recordPeer(.coldTenYears, try coldRead("grdb", grdbTenYears.path, day: tenYearDay, expected: tenYearDayTodos).total)
            })
    }

    /// 9. Migrating the 10-year store: a field renamed and one added, in every todo.
    private func runMigration(flip: Bool, in folder: URL) async throws {
        try await pair(
            flip,
            {
                let store = try await copyInUse(folioTenYears, "migrate-folio", in: folder)
                record(.migrateTenYears, try await MigrationContender.folio(store).seconds * 1000)
            },
            {
                let database = try copy(grdbTenYears, "migrate.sqlite", in: folder)
                recordPeer(.migrateTenYears, try MigrationContender.grdb(database.path).seconds * 1000)
            })
    }

    /// 6. Drain to the test server: raw requests, Folio one by one, Folio batched, and Folio's
    /// HTTPTransport alone one by one and batched.
    private func runDrain(_ round: Int, flip: Bool, in folder: URL) async throws {
        let commands = options.commands
        let drain = folder.appendingPathComponent("drain", isDirectory: true)
        var runs: [() async throws -> Void] = [
            {
                let elapsed = try await DrainContender.raw(server: self.server, count: commands, prefix: "r\(round)a", workload: self.workload, scratch: drain)
                self.recordPeer(.drainUnbatched, Double(commands) / elapsed.seconds)
                self.recordPeer(.drainBatchedRaw, Double(commands) / elapsed.seconds)
                self.recordPeer(.drainTransportRaw, Double(commands) / elapsed.seconds)
            },
            {
                let elapsed = try await DrainContender.folio(
                    server: self.server, count: commands, prefix: "r\(round)b", batchSize: 1,
                    workload: self.workload, scratch: drain)
                self.record(.drainUnbatched, Double(commands) / elapsed.seconds)
                self.recordPeer(.drainBatched, Double(commands) / elapsed.seconds)
                self.record(.drainUnbatchedTransport, Double(commands) / elapsed.seconds)
            },
            {
                let elapsed = try await DrainContender.folio(
                    server: self.server, count: commands, prefix: "r\(round)c",
                    batchSize: DrainContender.batchSize, workload: self.workload, scratch: drain)
                self.record(.drainBatched, Double(commands) / elapsed.seconds)
                self.record(.drainBatchedRaw, Double(commands) / elapsed.seconds)
                self.record(.drainBatchedTransport, Double(commands) / elapsed.seconds)
            },
            {
                let elapsed = try await DrainContender.transport(
                    server: self.server, count: commands, prefix: "r\(round)d", batchSize: 1, workload: self.workload, scratch: drain)
                self.record(.drainTransportRaw, Double(commands) / elapsed.seconds)
                self.recordPeer(.drainUnbatchedTransport, Double(commands) / elapsed.seconds)
            },
            {
                let elapsed = try await DrainContender.transport(
                    server: self.server, count: commands, prefix: "r\(round)e", batchSize: DrainContender.batchSize,
                    workload: self.workload, scratch: drain)
                self.recordPeer(.drainBatchedTransport, Double(commands) / elapsed.seconds)
            },
        ]
        if flip { runs.reverse() }
        for run in runs { try await run() }
    }

    /// Milliseconds of open + one-day query in a fresh child process, caches dropped first, and
    /// of the open alone.
    func coldRead(_ engine: String, _ path: String, day: String, expected: Int?) throws -> (total: Double, open: Double) {
        coldMethod = ColdCache.drop(path, allowDropCaches: options.dropCaches)
        let values = try ChildProcess.numbers(ChildProcess.run(["cold", engine, path, day]), expected: 3)
        if let expected, Int(values[1]) != expected {
            throw BenchError("\(engine) read \(Int(values[1])) todos of \(day), expected \(expected)")
        }
        guard values[1] > 0 else { throw BenchError("\(engine) read no todo of \(day)") }
        return (values[0] / 1e6, values[2] / 1e6)
    }
}
