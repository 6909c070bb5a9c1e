import Foundation

/// The machine-readable result (`--json FILE`): every measured row of the table (values per
/// round, ratios per round, target and whether it is met), what each floor measured, the sync
/// counts and commit costs, the peak memory of a session, the growth group, the scan matrix, the
/// outbox group, the options, the machine and when the run ended. `folio-bench chart` draws it
/// (ChartInput.swift reads back what it needs).
struct JSONReport: Encodable {
    struct RowResult: Codable {
        var key: String
        var measure: String
        var unit: String
        var contender: String
        var peer: String?
        var values: [Double]
        var peerValues: [Double]
        var median: Double?
        var peerMedian: Double?
        var ratios: [Double]
        var medianRatio: Double?
        var target: String?
        /// The bound itself, and what it bounds: `ratio` (the median ratio), `value` (the
        /// contender's median) or `aboveFloor` (the contender's median minus the peer's, a floor
        /// measured in the same run).
        var targetValue: Double?
        var targetKind: String?
        var met: Bool?
        /// "higherIsBetter" or "lowerIsBetter".
        var direction: String
    }

    /// A day-partitioned store: the ten-year store of rows 5, 9 and 10, or one of the growth
    /// group's.
    struct DayStoreResult: Codable {
        var days: Int
        var todos: Int
        var today: String
        var todayTodos: Int
        var predicate: String
        var predicateMatches: Int

        init(_ store: DayStore) {
            (days, todos, today) = (store.days, store.workload.todos.count, store.today)
            todayTodos = store.todayTodos
            predicate = "title contains \"\(Runner.scanWord)\" and not done"
            predicateMatches = store.scanMatches
        }
    }

    struct SyncResult: Encodable {
        var engine: String
        var transactions: Int
        var syncsPerTransaction: Double
        var checkpointSyncsPerTransaction: Double
        var commitSyncsByFile: [String: Int]
        var checkpointSyncsByFile: [String: Int]
        /// Per transaction without strace: wall µs, CPU µs, voluntary and involuntary context switches.
        var commitCost: [Double]
    }

    var machine: [String: String]
    var options: [String: String]
    /// When the run ended, ISO 8601 (UTC).
    var date: String
    var coldCacheMethod: String
    var rows: [RowResult]
    var syncs: [SyncResult]
    var syncProblem: String?
    /// What each floor row's floor measured (the calls it counted), by row key.
    var floors: [String: String]
    /// One bare overwrite + `fdatasync` (row 8's floor), just before and just after Folio's
    /// commits: wall µs, CPU µs, voluntary and involuntary context switches.
    var commitFloor: [[Double]]
    var peakRSSKilobytes: [String: Int]
    var tenYearStore: DayStoreResult?
    /// The growth group's stores and rows (`--only growth`); nil when it did not run.
    var growth: GrowthResult?
    /// The scan matrix's stores and cells (`--only scanmatrix`); nil when it did not run.
    var scanMatrix: ScanMatrixResult?
    /// The outbox group's stores and rows (`--only outbox`, JSONReport+Outbox.swift); nil when it did not run.
    var outbox: OutboxResult?

    /// The growth group: each store's size, and a row per measure and size (GRDB the peer, no
    /// target).
    struct GrowthResult: Codable {
        struct Point: Codable {
            /// ``Growth/Measure``'s raw value.
            var measure: String
            var days: Int
            var row: RowResult
        }

        var stores: [DayStoreResult]
        var points: [Point]
    }

    /// The scan matrix: each shape's store and predicates, and a row per cell and Folio contender
    /// (GRDB the peer, the ratios per round, target ≤ 3×, as the other rows).
    struct ScanMatrixResult: Encodable {
        struct Store: Encodable {
            var shape: String
            var days: Int
            var entities: Int
            /// On disk: Folio's day files and their bytes, its field index, SQLite's file.
            var dataFiles: Int
            var dataBytes: Int
            var fieldIndexBytes: Int
            var sqliteBytes: Int
            var predicates: [Predicate]
        }

        struct Predicate: Encodable {
            var selectivity: String
            var predicate: String
            var sql: String
            var sqlitePlan: String
            var matches: Int
        }

        var stores: [Store]
        /// What a cell's value is: a child's first query, or the median of a warm child's runs.
        var runs: String
        var cells: [RowResult]
    }

    @MainActor
    init(runner: Runner, machine: [String: String]) {
        self.machine = machine
        date = ISO8601DateFormatter().string(from: Date())
        let options = runner.options
        self.options = [
            "rounds": "\(options.rounds)", "todos": "\(options.todos)", "transactions": "\(options.transactions)",
            "reads": "\(options.reads)", "commands": "\(options.commands)", "tenYearDays": "\(options.tenYearDays)",
            "seed": "\(options.seed)", "quick": "\(options.quick)", "thirtyYears": "\(options.thirtyYears)",
            "groups": Options.Group.allCases.filter(options.runs).map(\.rawValue).joined(separator: ","),
            "outboxLengths": options.outboxLengths.map(String.init).joined(separator: ","), "outboxOps": "\(options.outboxOps)",
        ]
        coldCacheMethod = runner.coldMethod.rawValue
        rows = Row.Key.allCases.compactMap { key in runner.rows[key].map { (key, $0) } }.filter { $0.1.isMeasured }.map { key, row in
            Self.result(key: "\(key)", row)
        }
        syncs = runner.syncCounts.map {
            SyncResult(
                engine: $0.engine, transactions: $0.transactions, syncsPerTransaction: $0.perTransaction,
                checkpointSyncsPerTransaction: $0.checkpointPerTransaction,
                commitSyncsByFile: $0.commitSyncs, checkpointSyncsByFile: $0.checkpointSyncs, commitCost: $0.cost)
        }
        syncProblem = runner.syncProblem
        floors = Dictionary(uniqueKeysWithValues: runner.floorNotes.map { ("\($0.key)", $0.value) })
        commitFloor = runner.commitFloor
        peakRSSKilobytes = Dictionary(uniqueKeysWithValues: runner.peakMemory)
        tenYearStore = runner.tenYearStore.map(DayStoreResult.init)
        if !runner.growth.rows.isEmpty {
            growth = GrowthResult(
                stores: runner.growth.stores.map(DayStoreResult.init),
                points: runner.growth.measuredRows.map {
                    GrowthResult.Point(measure: $0.measure.rawValue, days: $0.days, row: Self.result(key: Growth.key($0.measure, days: $0.days), $0.row))
                })
        }
        outbox = OutboxResult(runner)
        let matrix = runner.scanMatrix
        if !matrix.stores.isEmpty {
            let stores = ScanShape.allCases.compactMap { matrix.stores[$0] }.map { store in
                ScanMatrixResult.Store(
                    shape: store.shape.rawValue, days: store.days, entities: store.entities,
                    dataFiles: store.dataFiles, dataBytes: store.dataBytes, fieldIndexBytes: store.indexBytes,
                    sqliteBytes: store.sqliteBytes,
                    predicates: ScanSelectivity.allCases.map { selectivity in
                        ScanMatrixResult.Predicate(
                            selectivity: selectivity.rawValue, predicate: store.shape.predicateText(selectivity),
                            sql: store.shape.sql(selectivity), sqlitePlan: store.plans[selectivity] ?? "",
                            matches: store.matches[selectivity] ?? 0)
                    })
            }
            let cells = ScanMatrix.cells.flatMap { cell in
                ScanContender.folio.compactMap { contender in
                    matrix.rows[cell]?[contender].map { Self.result(key: ScanMatrix.key(cell, contender), $0) }
                }
            }
            scanMatrix = ScanMatrixResult(
                stores: stores,
                runs: "fresh process: the first query after opening the store (not timed); "
                    + "warm process: the median of at least \(ScanRuns.minimumRuns) runs after an untimed one (a cold page cache: "
                    + "caches dropped before each run); ms", cells: cells)
        }
    }
}

extension JSONReport {
    /// A measured row as the report holds it.
    static func result(key: String, _ row: Row) -> RowResult {
        func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
        return RowResult(
            key: key, measure: row.name, unit: row.unit, contender: row.contender, peer: row.peer, values: row.values,
            peerValues: row.peerValues, median: finite(median(row.values)), peerMedian: finite(median(row.peerValues)),
            ratios: row.ratios, medianRatio: finite(row.medianRatio), target: row.target == nil ? nil : row.targetText,
            targetValue: row.target, targetKind: row.target == nil ? nil : row.targetKind.rawValue, met: row.met,
            direction: row.direction.rawValue)
    }
}
