// folio-drain-bench: the drain throughput of Folio's SyncEngine to the test server, next to the
// physical limit of sequential requests to that server.
//
//   swift run -c release folio-drain-bench [--commands N] [--rounds R]     (defaults 5000, 3)
//
// One TestServer (Tests/TestServer) on 127.0.0.1 serves every run. Each round runs, in this order,
//   A. raw:    N sequential `PUT {base}/items/{id}` with URLSession, each awaited before the next,
//              with the headers and body bytes Folio sends;
//   B. Folio:  N SyncItems written into a fresh store (not timed), then SyncEngine.drainNow()
//              timed until the queue is empty, one request per command;
//   C. Folio batched: the same with HTTPTransport.Options.batchSize = 100.
// Each run uses ids of its own (round and contender in the id), so runs never conflict. Every
// Folio run is checked: exactly N commands applied, each key once, nothing left pending (exit 1
// otherwise). Timing is measured and printed, never asserted.

import FolioTestServer
import Foundation

let arguments = Arguments.parse(CommandLine.arguments)
let commands = arguments.commands
let rounds = arguments.rounds
#if DEBUG
let buildConfiguration = "debug"
#else
let buildConfiguration = "release"
#endif

// A generous bound for the whole benchmark (a debug build on a slow machine included).
startWatchdog(limit: .seconds(120 + commands * rounds * 3 / 20))

let server: TestServer
do {
    server = try TestServer()
} catch {
    fail("could not start the test server: \(error)")
}
server.recordsRequests = false

print("Folio drain benchmark (\(buildConfiguration) build)")
print("machine:  \(machineDescription()), \(ProcessInfo.processInfo.activeProcessorCount) CPUs")
print("commands: N = \(commands) per run, rounds: R = \(rounds), contenders interleaved A B C per round")
print("server:   FolioTestServer at \(server.baseURL.absoluteString)")
let bodyBytes: Int
do {
    bodyBytes = try await checkBodyMatchesFolio()
} catch {
    fail("the body check failed: \(error)")
}
print("body:     \(bodyBytes) bytes of JSON per command, the same bytes for all three")
print("")

var results: [Contender: [Measurement]] = [:]
let columns = "round  " + pad("contender", 22, left: true) + pad("commands/s", 12) + pad("ms/command", 12)
    + pad("requests", 10) + pad("vs raw", 9)
print(columns)
print(String(repeating: "-", count: columns.count))
flushOutput()
for round in 1...rounds {
    var rawRate = Double.nan
    for contender in Contender.allCases {
        let prefix = Workload.prefix(round: round, contender: contender)
        let measurement: Measurement
        do {
            switch contender {
            case .raw: measurement = try await runRaw(server: server, count: commands, prefix: prefix)
            case .folio: measurement = try await runFolio(server: server, count: commands, prefix: prefix, batchSize: 1)
            case .folioBatched:
                measurement = try await runFolio(server: server, count: commands, prefix: prefix, batchSize: Workload.batchSize)
            }
        } catch {
            fail("\(contender.title), round \(round): \(error)")
        }
        results[contender, default: []].append(measurement)
        if contender == .raw { rawRate = measurement.commandsPerSecond }
        let ratio = measurement.commandsPerSecond / rawRate
        print(pad(String(round), 5, left: true) + "  " + pad(contender.title, 22, left: true)
              + pad(format(measurement.commandsPerSecond, decimals: 0), 12)
              + pad(format(measurement.millisecondsPerCommand, decimals: 3), 12)
              + pad(String(measurement.requests), 10)
              + pad(format(ratio, decimals: 2) + "×", 9))
        flushOutput()
    }
}

print("")
print("Median over \(rounds) round\(rounds == 1 ? "" : "s") (vs raw: the median of the per-round ratios)")
let summaryColumns = pad("contender", 22, left: true) + pad("commands/s", 12) + pad("ms/command", 12) + "   vs raw"
print(summaryColumns)
print(String(repeating: "-", count: summaryColumns.count + 4))
let rawRates = (results[.raw] ?? []).map(\.commandsPerSecond)
for contender in Contender.allCases {
    let runs = results[contender] ?? []
    let ratio = median(zip(runs, rawRates).map { $0.commandsPerSecond / $1 })
    print(pad(contender.title, 22, left: true) + pad(format(median(runs.map(\.commandsPerSecond)), decimals: 0), 12)
          + pad(format(median(runs.map(\.millisecondsPerCommand)), decimals: 3), 12)
          + "   " + format(ratio, decimals: 2) + "× raw")
}
print("")
print("Timed: the requests (A) or the drainNow() calls (B, C) only; writing the store, its checkpoint and")
print("closing it are not. Each Folio run was checked: \(commands) commands applied once each, none pending.")

server.stop()
Scratch.removeAll()
