// folio-bench: Folio side by side with SQLite (through GRDB 7.10.0) and the disk's own limits,
// contenders interleaved round by round, medians and per-round ratios. See BENCHMARKS.md.
//
//   swift run -c release --package-path Benchmarks folio-bench [--quick] [--json FILE] [--chart FILE]
//   swift run -c release --package-path Benchmarks folio-bench chart results.json chart.svg

import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "chart" {
    guard arguments.count == 3 else {
        FileHandle.standardError.write(Data("usage: folio-bench chart RESULTS.json CHART.svg\n".utf8))
        exit(2)
    }
    do {
        try Chart.write(json: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]))
        print("chart written to \(arguments[2])")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("folio-bench chart: \(error)\n".utf8))
        exit(1)
    }
}

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
say(
    "workload: \(options.todos) todos over 365 days (seed \(options.seed)), \(options.transactions) transactions, "
        + "\(options.reads) warm reads, \(options.commands) drained commands per contender and round; "
        + "\(options.rounds) rounds, contenders alternated A B / B A")
if options.groups.count < Options.Group.allCases.count {
    say("only:     " + Options.Group.allCases.filter(options.runs).map(\.rawValue).joined(separator: ", "))
}
say("")

do {
    let start = ContinuousClock.now
    try await runner.prepare()
    say(
        "seeded the templates"
            + (runner.tenYears == nil
                ? ""
                : " and the \(options.tenYearDays)-day store (\(runner.tenYearTodos) todos"
                    + (options.runs(.tenyear) ? "; the predicate matches \(runner.expectedScanMatches)" : "") + ")")
            + (options.runs(.growth)
                ? ", the growth group's stores (" + options.growthDays.map { Row.span(days: $0) }.joined(separator: ", ") + ")" : "")
            + (options.runs(.scanmatrix) ? " and the scan matrix's stores (each contender's counts checked once)" : "")
            + (options.runs(.outbox)
                ? ", the outbox group's stores (" + options.outboxLengths.map { Format.count($0) }.joined(separator: ", ") + " pending)" : "")
            + " in \(Format.value((ContinuousClock.now - start).seconds)) s (not timed)")
    try await runner.runRounds(log: say)
    if options.runs(.costs) {
        runner.countSyncs()
        try runner.measurePeakMemory()
    }
} catch {
    runner.removeScratch()
    fail("\(error)")
}

say("")
let measuredRows = Row.Key.allCases.compactMap { runner.rows[$0] }.filter(\.isMeasured)
if !measuredRows.isEmpty {
    say(Table.render(measuredRows))
    say("")
}
say("ratio = contender ÷ peer, per round (rates: higher is better; times in ms/µs: lower is better).")
say(
    "target: on the median ratio, or on the median value where it has a unit (syncs, MiB), or on the median's margin over a floor "
        + "measured in the same run (switches).")
say("cold reads: caches made cold with \(runner.coldMethod.rawValue).")
if options.runs(.tenyear) {
    say(
        "10: each measure in a fresh child process on the \(options.tenYearDays)-day store; predicate: title contains "
            + "\"\(Runner.scanWord)\" and not done (\(runner.expectedScanMatches) of \(runner.tenYearTodos) todos).")
}
if options.runs(.drain) {
    say("6: the batched drain's target is against raw URLSession one by one, the floor of sequential requests to this server.")
}
for key in Row.Key.allCases { if let note = runner.floorNotes[key] { say(note) } }
say("")
if options.runs(.costs) { CostReport.lines(runner).forEach(say) }
if options.runs(.growth) {
    if options.runs(.costs) { say("") }
    say("Growth with the store's size (each measure the same work at every size; rows inform, no target):")
    say(Table.render(runner.growth.measuredRows.map(\.row)))
}
if options.runs(.scanmatrix) {
    if options.runs(.costs) || options.runs(.growth) { say("") }
    ScanMatrixTable.lines(runner.scanMatrix, rounds: options.rounds).forEach(say)
}
if options.runs(.outbox) {
    if options.runs(.costs) || options.runs(.growth) || options.runs(.scanmatrix) { say("") }
    OutboxTable.lines(runner.outbox, rounds: options.rounds).forEach(say)
}

if options.json != nil || options.chart != nil {
    let report: Data
    do {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        report = try encoder.encode(JSONReport(runner: runner, machine: machine))
    } catch {
        runner.removeScratch()
        fail("could not encode the results: \(error)")
    }
    let outputs: [(path: String?, what: String, write: (URL) throws -> Void)] = [
        (options.json, "JSON", { try report.write(to: $0) }),
        (options.chart, "chart", { try Chart.write(report: report, to: $0) }),
    ]
    for output in outputs {
        guard let path = output.path else { continue }
        do {
            try output.write(URL(fileURLWithPath: path))
            say("")
            say("\(output.what) written to \(path)")
        } catch {
            runner.removeScratch()
            fail("could not write \(path): \(error)")
        }
    }
}
runner.removeScratch()
