import Foundation

/// The tables of what row 8 measured once: sync syscalls per transaction, the cost of one commit,
/// and a whole session's peak memory.
enum CostReport {
    @MainActor
    static func lines(_ runner: Runner) -> [String] {
        var out: [String] = []
        out.append("Sync syscalls per transaction (strace -f, the same way for every engine):")
        if let problem = runner.syncProblem { out.append("  \(problem)") }
        for count in runner.syncCounts {
            let commit = count.commitSyncs.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let checkpoint = count.checkpointSyncs.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            out.append(
                "  " + Format.pad(count.engine, 14, left: true) + " commits: " + Format.value(count.perTransaction) + " per txn"
                    + "  then checkpoint: " + Format.value(count.checkpointPerTransaction) + " per txn"
                    + "   (\(count.transactions) txns; commits: \(commit.isEmpty ? "none" : commit); checkpoint: \(checkpoint.isEmpty ? "none" : checkpoint))")
        }
        out.append("")
        out.append("Cost of one transaction's commit, without strace, over \(SyncCounter.costTransactions) commits after the seeded files were")
        out.append("written out (wall time depends on the machine's load; CPU time and context switches much less):")
        for count in runner.syncCounts where count.cost.count == 4 {
            out.append(
                "  " + Format.pad(count.engine, 14, left: true) + Format.pad(Format.value(count.cost[0]), 9) + " µs wall"
                    + Format.pad(Format.value(count.cost[1]), 9) + " µs CPU" + Format.pad(Format.value(count.cost[2]), 8) + " voluntary"
                    + Format.pad(Format.value(count.cost[3]), 8) + " involuntary context switches")
        }
        for (index, cost) in runner.commitFloor.enumerated() where cost.count == 4 {
            out.append(
                "  " + Format.pad(index == 0 ? "floor before" : "floor after", 14, left: true) + Format.pad(Format.value(cost[0]), 9)
                    + " µs wall" + Format.pad(Format.value(cost[1]), 9) + " µs CPU" + Format.pad(Format.value(cost[2]), 8)
                    + " voluntary" + Format.pad(Format.value(cost[3]), 8) + " involuntary  (overwrite 256 B + fdatasync, bare)")
        }
        out.append("")
        out.append("Peak RSS (VmHWM) of a child running one engine's session (bulk import, \(runner.options.transactions) transactions, a read of every day):")
        let baseline = runner.peakMemory.first { $0.0 == "none" }?.1 ?? 0
        for (engine, kilobytes) in runner.peakMemory {
            let name = Format.pad(engine == "none" ? "baseline" : engine, 9, left: true)
            let size = Format.pad(String(format: "%.1f MiB", Double(kilobytes) / 1024), 11)
            let note =
                engine == "none"
                ? "  (the process and the workload alone)"
                : String(format: "  (+%.1f MiB over the baseline)", Double(kilobytes - baseline) / 1024)
            out.append("  " + name + size + note)
        }
        return out
    }
}
