// folio-bench: Folio side by side with SQLite (through GRDB 7.10.0) and the disk's own limits,
// contenders interleaved round by round, medians and per-round ratios. See BENCHMARKS.md.
//
//   swift run -c release --package-path Benchmarks folio-bench [--quick] [--json FILE]

import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "__child" {
    do {
        try await ChildMain.run(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("folio-bench child: \(error)\n".utf8))
        exit(1)
    }
}

func say(_ line: String) {
    print(line)
    fflush(nil)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("folio-bench: FAILED: \(message)\n".utf8))
    exit(1)
}

let options: Options
do { options = try Options.parse(arguments) } catch { fail("\(error)") }

let runner: Runner
do { runner = try Runner(options: options) } catch { fail("could not start: \(error)") }
let machine = Machine.describe(scratch: runner.scratch)

say("Folio benchmarks (\(machine["build"] ?? "?") build\(options.quick ? ", quick" : ""))")
say("machine:  \(machine["cpu"] ?? "?"), \(machine["cores"] ?? "?") cores, \(machine["memory"] ?? "?")")
say("os:       \(machine["os"] ?? "?")")
say("disk:     \(machine["disk"] ?? "?")")
say("workload: \(options.todos) todos over 365 days (seed \(options.seed)), \(options.transactions) transactions, "
    + "\(options.reads) warm reads, \(options.commands) drained commands per contender and round; "
    + "\(options.rounds) rounds, contenders alternated A B / B A")
say("")

do {
    let start = ContinuousClock.now
    try await runner.prepare()
    say("seeded the templates and the \(options.tenYearDays)-day store (\(runner.tenYearTodos) todos) in "
        + "\(Format.value((ContinuousClock.now - start).seconds)) s (not timed)")
    try await runner.runRounds(log: say)
    runner.countSyncs()
    try runner.measurePeakMemory()
} catch {
    runner.removeScratch()
    fail("\(error)")
}

say("")
say(Table.render(Row.Key.allCases.compactMap { runner.rows[$0] }))
say("")
say("ratio = contender ÷ peer, per round (rates: higher is better; times in ms/µs: lower is better).")
say("cold reads: caches made cold with \(runner.coldMethod.rawValue).")
say("")
say("Sync syscalls per transaction (strace -f, the same way for every engine):")
if let problem = runner.syncProblem { say("  \(problem)") }
for count in runner.syncCounts {
    let commit = count.commitSyncs.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    let checkpoint = count.checkpointSyncs.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    say("  " + Format.pad(count.engine, 14, left: true) + " commits: " + Format.value(count.perTransaction) + " per txn"
        + "  then checkpoint: " + Format.value(count.checkpointPerTransaction) + " per txn"
        + "   (\(count.transactions) txns; commits: \(commit.isEmpty ? "none" : commit); checkpoint: \(checkpoint.isEmpty ? "none" : checkpoint))")
}
say("")
say("Cost of one transaction's commit, without strace (wall time depends on the machine's load; CPU time and")
say("context switches much less):")
for count in runner.syncCounts where count.cost.count == 4 {
    say("  " + Format.pad(count.engine, 14, left: true) + Format.pad(Format.value(count.cost[0]), 9) + " µs wall"
        + Format.pad(Format.value(count.cost[1]), 9) + " µs CPU" + Format.pad(Format.value(count.cost[2]), 8) + " voluntary"
        + Format.pad(Format.value(count.cost[3]), 8) + " involuntary context switches")
}
say("")
say("Peak RSS (VmHWM) of a child running one engine's session (bulk import, \(options.transactions) transactions, a read of every day):")
let baseline = runner.peakMemory.first { $0.0 == "none" }?.1 ?? 0
for (engine, kilobytes) in runner.peakMemory {
    let name = Format.pad(engine == "none" ? "baseline" : engine, 9, left: true)
    let size = Format.pad(String(format: "%.1f MiB", Double(kilobytes) / 1024), 11)
    let note = engine == "none" ? "  (the process and the workload alone)"
        : String(format: "  (+%.1f MiB over the baseline)", Double(kilobytes - baseline) / 1024)
    say("  " + name + size + note)
}

if let path = options.json {
    do {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(JSONReport(runner: runner, machine: machine)).write(to: URL(fileURLWithPath: path))
        say("")
        say("JSON written to \(path)")
    } catch {
        runner.removeScratch()
        fail("could not write \(path): \(error)")
    }
}
runner.removeScratch()
