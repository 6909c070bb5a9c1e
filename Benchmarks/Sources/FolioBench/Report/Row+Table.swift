extension Row {
    /// The rows of the table, in print order.
    enum Key: Int, CaseIterable, Sendable {
        case durableTotal, durableCommit, relaxedTotal, relaxedCommit, concurrentTotal, concurrentCommit
        case bulkTotal, bulkCommit, bulkOutboxTotal, bulkOutboxCommit
        case warmRead, coldRead, coldTenYears
        case drainUnbatched, drainBatched, drainBatchedRaw
        case diskAppend, diskOverwrite, diskReplace, folioFraction, grdbFraction
        case migrateTenYears
    }

    static var table: [Key: Row] {
        var rows: [Key: Row] = [:]
        func rate(_ key: Key, _ name: String, _ contender: String, _ peer: String?, _ target: Double?, unit: String = "tx/s") {
            rows[key] = Row(name: name, unit: unit, direction: .higherIsBetter, contender: contender, peer: peer, target: target)
        }
        func time(_ key: Key, _ name: String, _ unit: String, _ contender: String, _ peer: String, _ target: Double?) {
            rows[key] = Row(name: name, unit: unit, direction: .lowerIsBetter, contender: contender, peer: peer, target: target)
        }
        rate(.durableTotal, "1 durable txn, commits + checkpoint", "Folio full", "GRDB WAL FULL", 1.5)
        rate(.durableCommit, "1 durable txn, commits only", "Folio full", "GRDB WAL FULL", 1.5)
        rate(.relaxedTotal, "2 relaxed txn, commits + checkpoint", "Folio relaxed", "GRDB WAL NORMAL", 1.0)
        rate(.relaxedCommit, "2 relaxed txn, commits only", "Folio relaxed", "GRDB WAL NORMAL", 1.0)
        rate(.concurrentTotal, "3 4 writers, commits + checkpoint", "Folio group commit", "GRDB DatabasePool", nil)
        rate(.concurrentCommit, "3 4 writers, commits only", "Folio group commit", "GRDB DatabasePool", nil)
        time(.bulkTotal, "4 bulk import, commit + checkpoint", "ms", "Folio full", "GRDB WAL FULL", 1.0)
        time(.bulkCommit, "4 bulk import, commit only", "ms", "Folio full", "GRDB WAL FULL", 1.0)
        time(.bulkOutboxTotal, "4 bulk import + outbox, commit + checkpoint", "ms", "Folio full", "GRDB WAL FULL", nil)
        time(.bulkOutboxCommit, "4 bulk import + outbox, commit only", "ms", "Folio full", "GRDB WAL FULL", nil)
        time(.warmRead, "5 read one day, warm", "µs", "Folio (cache)", "GRDB by date index", 0.2)
        time(.coldRead, "5 open + read one day, cold process", "ms", "Folio", "GRDB", 1.0)
        time(.coldTenYears, "5 open 10-year store + one day, cold", "ms", "Folio", "GRDB", 0.5)
        time(.migrateTenYears, "9 migrate the 10-year store (rename + default)", "ms", "Folio Migrator", "GRDB DatabaseMigrator", nil)
        rate(.drainUnbatched, "6 drain, one request per command", "Folio one-by-one", "raw URLSession", 0.8, unit: "cmd/s")
        rate(.drainBatched, "6 drain, batched (100) vs one-by-one", "Folio batched", "Folio one-by-one", 10, unit: "cmd/s")
        rate(.drainBatchedRaw, "6 drain, batched (100) vs raw", "Folio batched", "raw URLSession", nil, unit: "cmd/s")
        rate(.diskAppend, "7 disk: append 256 B + fdatasync", "this disk", nil, nil, unit: "op/s")
        rate(.diskOverwrite, "7 disk: overwrite 256 B + fdatasync", "this disk", nil, nil, unit: "op/s")
        rate(.diskReplace, "7 disk: temp+fsync+rename+fsync(dir)", "this disk", nil, nil, unit: "op/s")
        rate(.folioFraction, "7 durable commits / append+fdatasync", "Folio full", "disk limit", nil)
        rate(.grdbFraction, "7 durable commits / append+fdatasync", "GRDB WAL FULL", "disk limit", nil)
        return rows
    }
}
