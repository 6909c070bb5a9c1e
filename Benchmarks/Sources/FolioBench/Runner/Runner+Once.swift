import Foundation

extension Runner {
    /// 8 and the sync count: measured once each, in child processes (they count, not time).
    static let syncEngines = ["folio-full", "folio-relaxed", "grdb-full", "grdb-normal"]

    /// The sync syscalls per transaction of each engine, under strace (SyncCounter.swift), and
    /// the rows made of them: checkpoint syncs per transaction, context switches and CPU time per
    /// durable commit (Folio full vs GRDB FULL; one value each, measured once), and the context
    /// switches per durable commit against the disk's floor (Runner+Floors.swift).
    func countSyncs() {
        guard options.countSyncs else {
            syncProblem = "not counted (--no-strace)"
            return
        }
        let folder = scratch.appendingPathComponent("syncs", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for engine in Self.syncEngines {
                let path = folder.appendingPathComponent(engine.hasPrefix("grdb") ? engine + ".sqlite" : engine).path
                // The floor of a commit's context switches, just before and just after Folio's
                // commits, on the same disk (whose latency swings within minutes here).
                if engine == "folio-full" { try measureCommitFloor(in: folder) }
                syncCounts.append(
                    try SyncCounter.count(
                        engine: engine, path: path, traceFile: path + ".trace",
                        seed: options.seed, todos: options.todos, transactions: min(options.transactions, 200)))
                if engine == "folio-full" {
                    try measureCommitFloor(in: folder)
                    recordPeer(.commitSwitches, commitFloor.map { $0[2] + $0[3] }.reduce(0, +) / Double(commitFloor.count))
                }
            }
        } catch {
            syncProblem = "could not count: \(error)"
        }
        for (engine, isPeer) in [("folio-full", false), ("grdb-full", true)] {
            guard let count = syncCounts.first(where: { $0.engine == engine }) else { continue }
            func add(_ key: Row.Key, _ value: Double) { isPeer ? recordPeer(key, value) : record(key, value) }
            add(.checkpointSyncs, count.checkpointPerTransaction)
            if count.cost.count == 4 {
                if !isPeer { record(.commitSwitches, count.cost[2] + count.cost[3]) }
                add(.commitSwitchesGRDB, count.cost[2] + count.cost[3])
                add(.commitCPU, count.cost[1])
            }
        }
    }

    /// Peak RSS of a child that runs one engine's whole session (bulk import, transactions, a read
    /// of every day), and of a child that only builds the workload (the baseline both include).
    func measurePeakMemory() throws {
        let folder = scratch.appendingPathComponent("rss", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for engine in ["none", "folio", "grdb"] {
            let path = folder.appendingPathComponent(engine == "grdb" ? "grdb.sqlite" : engine).path
            let output = try ChildProcess.run(["rss", engine, path, String(options.seed), String(options.todos), String(options.transactions)])
            peakMemory.append((engine, Int(try ChildProcess.numbers(output, expected: 1)[0])))
        }
    }
}
