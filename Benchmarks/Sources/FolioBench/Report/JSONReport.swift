import Foundation

/// The machine-readable result (`--json FILE`).
struct JSONReport: Encodable {
    struct RowResult: Encodable {
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
        var met: Bool?
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
    var coldCacheMethod: String
    var rows: [RowResult]
    var syncs: [SyncResult]
    var syncProblem: String?
    var peakRSSKilobytes: [String: Int]

    @MainActor
    init(runner: Runner, machine: [String: String]) {
        self.machine = machine
        let options = runner.options
        self.options = ["rounds": "\(options.rounds)", "todos": "\(options.todos)", "transactions": "\(options.transactions)",
                        "reads": "\(options.reads)", "commands": "\(options.commands)", "tenYearDays": "\(options.tenYearDays)",
                        "seed": "\(options.seed)", "quick": "\(options.quick)"]
        coldCacheMethod = runner.coldMethod.rawValue
        func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
        rows = Row.Key.allCases.compactMap { runner.rows[$0] }.map { row in
            RowResult(measure: row.name, unit: row.unit, contender: row.contender, peer: row.peer, values: row.values,
                      peerValues: row.peerValues, median: finite(median(row.values)), peerMedian: finite(median(row.peerValues)),
                      ratios: row.ratios, medianRatio: finite(row.medianRatio), target: row.target == nil ? nil : row.targetText, met: row.met)
        }
        syncs = runner.syncCounts.map {
            SyncResult(engine: $0.engine, transactions: $0.transactions, syncsPerTransaction: $0.perTransaction,
                       checkpointSyncsPerTransaction: $0.checkpointPerTransaction,
                       commitSyncsByFile: $0.commitSyncs, checkpointSyncsByFile: $0.checkpointSyncs, commitCost: $0.cost)
        }
        syncProblem = runner.syncProblem
        peakRSSKilobytes = Dictionary(uniqueKeysWithValues: runner.peakMemory)
    }
}
