extension Row {
    /// The rows of the table, in print order.
    enum Key: Int, CaseIterable, Sendable {
        case durableTotal, durableCommit, relaxedTotal, relaxedCommit, concurrentTotal, concurrentCommit
        case bulkTotal, bulkCommit, bulkOutboxTotal, bulkOutboxCommit, bulkOutboxFloor
        case warmRead, coldRead, coldCopyRead, coldTenYears
        case drainUnbatched, drainBatched, drainBatchedRaw, drainTransportRaw, drainUnbatchedTransport, drainBatchedTransport
        case diskAppend, diskOverwrite, diskReplace, folioFraction, grdbFraction
        case checkpointSyncs, commitSwitches, commitSwitchesGRDB, commitCPU
        case migrateTenYears
        case tenYearScan, tenYearEveryDay, tenYearColdGet, tenYearIdCalls, tenYearColdGetFloor
        case tenYearPeakMemory, tenYearPeakMemoryTotal, widgetMemory
        case outboxColdOpen, outboxReadDay, outboxStatusWarm, outboxStatusFresh, outboxCommitWarm, outboxCommitFresh
        case outboxCoalescedWarm, outboxCoalescedFresh, outboxCLIStatus, outboxCLIList
    }

    /// "10 years" for 3,650 days, "1 year" for 365, else the days: the name of the ten-year
    /// store in row names, so a run with `--ten-year-days` or `--quick` says what it measured.
    static func span(days: Int) -> String {
        guard days % 365 == 0 else { return "\(days) days" }
        return days == 365 ? "1 year" : "\(days / 365) years"
    }

    /// The rows and their targets: issue 15's table for rows 1, 2, 4, 6, 8 and 10 (earlier issues
    /// for the reads of row 5), four of them restated by issue 29 against the machine's floor for
    /// the same work, measured in the same run: the bulk import with outbox against creating and
    /// syncing as many bare files, the batched drain against raw requests one by one, the context
    /// switches of a commit against a bare overwrite + `fdatasync`, the cold get against GRDB plus
    /// the system calls of the duplicate-id guarantee (their rows against GRDB or Folio one by one
    /// stay, without a target).
    static func table(tenYearDays: Int) -> [Key: Row] {
        var rows: [Key: Row] = [:]
        let years = span(days: tenYearDays)
        let store = tenYearDays % 365 == 0 ? "\(tenYearDays / 365)-year store" : "\(tenYearDays)-day store"
        func rate(_ key: Key, _ name: String, _ contender: String, _ peer: String?, _ target: Double?, unit: String = "tx/s") {
            rows[key] = Row(name: name, unit: unit, direction: .higherIsBetter, contender: contender, peer: peer, target: target)
        }
        func time(
            _ key: Key, _ name: String, _ unit: String, _ contender: String, _ peer: String, _ target: Double?,
            kind: TargetKind = .ratio
        ) {
            rows[key] = Row(
                name: name, unit: unit, direction: .lowerIsBetter, contender: contender, peer: peer, target: target,
                targetKind: kind)
        }
        rate(.durableTotal, "1 durable txn, commits + checkpoint", "Folio full", "GRDB WAL FULL", 1.0)
        rate(.durableCommit, "1 durable txn, commits only", "Folio full", "GRDB WAL FULL", 1.5)
        rate(.relaxedTotal, "2 relaxed txn, commits + checkpoint", "Folio relaxed", "GRDB WAL NORMAL", 0.8)
        rate(.relaxedCommit, "2 relaxed txn, commits only", "Folio relaxed", "GRDB WAL NORMAL", 1.2)
        rate(.concurrentTotal, "3 4 writers, commits + checkpoint", "Folio group commit", "GRDB DatabasePool", nil)
        rate(.concurrentCommit, "3 4 writers, commits only", "Folio group commit", "GRDB DatabasePool", nil)
        time(.bulkTotal, "4 bulk import, commit + checkpoint", "ms", "Folio full", "GRDB WAL FULL", nil)
        time(.bulkCommit, "4 bulk import, commit only", "ms", "Folio full", "GRDB WAL FULL", 1.0)
        time(.bulkOutboxTotal, "4 bulk import + outbox, commit + checkpoint", "ms", "Folio full", "GRDB WAL FULL", nil)
        time(.bulkOutboxCommit, "4 bulk import + outbox, commit only", "ms", "Folio full", "GRDB WAL FULL", nil)
        time(.bulkOutboxFloor, "4 bulk import + outbox, commit + checkpoint, vs bare files", "ms", "Folio full", "bare files + syncfs", 1.3)
        time(.warmRead, "5 read one day, warm", "µs", "Folio (cache)", "GRDB by date index", 0.2)
        time(.coldRead, "5 open + read one day, cold process", "ms", "Folio", "GRDB", 1.0)
        time(.coldCopyRead, "5 first open of a copied store + one day, cold", "ms", "Folio", "GRDB", nil)
        time(.coldTenYears, "5 open \(store) + one day, cold", "ms", "Folio", "GRDB", 0.5)
        rate(.drainUnbatched, "6 drain, one request per command", "Folio one-by-one", "raw URLSession", 0.9, unit: "cmd/s")
        rate(.drainBatched, "6 drain, batched (100) vs one-by-one", "Folio batched", "Folio one-by-one", nil, unit: "cmd/s")
        rate(.drainBatchedRaw, "6 drain, batched (100) vs raw one-by-one", "Folio batched", "raw URLSession", 5, unit: "cmd/s")
        rate(.drainTransportRaw, "6 HTTPTransport alone, one by one, vs raw", "HTTPTransport one-by-one", "raw URLSession", nil, unit: "cmd/s")
        rate(
            .drainUnbatchedTransport, "6 drain one by one vs HTTPTransport alone", "Folio one-by-one", "HTTPTransport one-by-one", nil,
            unit: "cmd/s")
        rate(.drainBatchedTransport, "6 drain batched (100) vs HTTPTransport alone", "Folio batched", "HTTPTransport batched", nil, unit: "cmd/s")
        rate(.diskAppend, "7 disk: append 256 B + fdatasync", "this disk", nil, nil, unit: "op/s")
        rate(.diskOverwrite, "7 disk: overwrite 256 B + fdatasync", "this disk", nil, nil, unit: "op/s")
        rate(.diskReplace, "7 disk: temp+fsync+rename+fsync(dir)", "this disk", nil, nil, unit: "op/s")
        rate(.folioFraction, "7 durable commits / append+fdatasync", "Folio full", "disk limit", nil)
        rate(.grdbFraction, "7 durable commits / append+fdatasync", "GRDB WAL FULL", "disk limit", nil)
        time(.checkpointSyncs, "8 checkpoint syncs per txn (amortised)", "syncs", "Folio full", "GRDB WAL FULL", 0.05, kind: .value)
        time(
            .commitSwitches, "8 context switches per durable commit, vs the disk's", "switches", "Folio full",
            "overwrite+fdatasync", 0.2, kind: .aboveFloor)
        time(.commitSwitchesGRDB, "8 context switches per durable commit", "switches", "Folio full", "GRDB WAL FULL", nil)
        time(.commitCPU, "8 CPU time per durable commit", "µs", "Folio full", "GRDB WAL FULL", 1.0)
        time(.migrateTenYears, "9 migrate the \(store) (rename + default)", "ms", "Folio Migrator", "GRDB DatabaseMigrator", nil)
        time(
            .tenYearScan, "10 predicate over \(years) (title contains, not done)", "ms", "Folio .all + #Predicate",
            "GRDB LIKE + done = 0", 3.0)
        time(.tenYearEveryDay, "10 read every day of \(years), one query each", "ms", "Folio", "GRDB by date index", 1.2)
        time(.tenYearColdGet, "10 cold process: open \(store) + get one id", "ms", "Folio get(id:)", "GRDB primary key", nil)
        time(.tenYearIdCalls, "10 cold process: list month folders + stat day files", "ms", "the id guarantee's calls", "GRDB primary key", nil)
        time(
            .tenYearColdGetFloor, "10 cold get vs GRDB + the id guarantee's calls", "ms", "Folio get(id:)",
            "GRDB + calls (floor)", 2.0)
        time(.tenYearPeakMemory, "10 peak RSS after reading \(years), over baseline", "MiB", "Folio", "GRDB", 2.0)
        time(.tenYearPeakMemoryTotal, "10 peak RSS after reading \(years), whole process", "MiB", "Folio", "GRDB", nil)
        time(.widgetMemory, "10 widget: open \(store) + today, RSS growth", "MiB", "Folio", "GRDB", 8, kind: .value)
        return rows
    }
}
