import FolioCrashSupport
import Foundation
import Testing

/// Issue 12's promise, end to end: three client processes, each with its own store, work offline
/// (create, edit, toggle, move between days and months, delete, the move-edit-delete chain, tag
/// create/rename/recolor/delete, custom commands), then sync in a random order through a proxy
/// that resets, truncates, stalls and loses answers, and are SIGKILLed mid-sync at random; some
/// syncs are cut short and more offline changes follow before they resume. After every sync and at
/// the end, the server, the client that synced and a model written from PROTOCOL.md's three-way
/// merge (ConvergenceModel) must agree, entity by entity; every custom command is applied exactly
/// once, no idempotency key twice, and nothing the model deleted exists anywhere.
///
/// `FOLIO_CONVERGENCE_SEED=0x…` replays a seed (the network's timing still varies: the model
/// predicts the same outcome whatever the faults hit); `FOLIO_CONVERGENCE_SHOW=N` shows N
/// mismatches; `FOLIO_CONVERGENCE_KEEP=DIR` keeps the clients' folders and logs of a failing run.
@Suite struct MultiClientConvergenceTests {
    static let defaultSeed: UInt64 = 0x3
    static let clients = 3
    static let rounds = 5

    static var seed: UInt64 {
        guard let text = ProcessInfo.processInfo.environment["FOLIO_CONVERGENCE_SEED"] else { return defaultSeed }
        if text.lowercased().hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) ?? defaultSeed }
        return UInt64(text) ?? defaultSeed
    }

    @Test func clientsServerAndModelConverge() async throws {
        let seed = Self.seed
        let runner = try ConvergenceRunner(seed: seed, clients: Self.clients, faultProbability: 0.2, budget: .seconds(50))
        defer { runner.stop() }
        let start = ContinuousClock.now
        var roundsRun = 0
        // Two rounds always (the second meets what the first left); more while the budget lasts.
        for round in 1...Self.rounds where round <= 2 || ContinuousClock.now < runner.deadline {
            roundsRun = round
            let label = "r\(round)"
            for client in 0..<Self.clients {
                try await runner.offline(client: client, round: round, count: runner.workload.int(6...12), label: label)
            }
            var order = Array(0..<Self.clients)
            order.shuffle(using: &runner.workload.random)
            for client in order {
                if round > 1 && runner.workload.chance(0.4) {
                    try await runner.interruptedPush(client: client, round: round, label: label + "i")
                }
                let state = try await runner.sync(client: client, label: label, kills: runner.workload.int(0...2))
                runner.model.sync(client: client)
                try runner.check(label, client: client, state: state)
            }
        }
        // Every client pulls what the others pushed last.
        for client in 0..<Self.clients {
            let state = try await runner.sync(client: client, label: "final", kills: runner.workload.int(0...1))
            runner.model.sync(client: client)
            try runner.check("final", client: client, state: state)
        }
        runner.checkExactlyOnce()

        let counts = runner.counts
        let duration = (ContinuousClock.now - start).components
        let elapsed = Double(duration.seconds) + Double(duration.attoseconds) / 1e18
        let faults = FaultProxy.Fault.allCases.map { "\(runner.proxy.faultCounts[$0, default: 0]) \($0.rawValue)" }.joined(separator: " ")
        print("multi-client convergence: \(Self.clients) clients, \(counts.operations) ops, \(counts.kills) kills, "
              + "\(runner.proxy.faultCount) faults, \(counts.mismatches) mismatches, \(counts.resurrected) resurrected "
              + "(seed 0x\(String(seed, radix: 16)), \(roundsRun) rounds, \(counts.interrupted) interrupted pushes, faults: \(faults), "
              + "\(counts.traps) FoundationNetworking traps, \(runner.proxy.cutsInHead) cuts inside a response head, "
              + "\(String(format: "%.1f", elapsed)) s)")
        if counts.mismatches > 0, let keep = ProcessInfo.processInfo.environment["FOLIO_CONVERGENCE_KEEP"] {
            // The client stores (outbox/sent/, .folio/) and every child's output, for a post-mortem.
            let copy = URL(fileURLWithPath: keep).appendingPathComponent("seed-\(String(seed, radix: 16))-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: runner.root.url.deletingLastPathComponent(), to: copy)
            print("multi-client convergence: the clients' folders and logs are kept in \(copy.path)")
        }
        #expect(counts.mismatches == 0 && counts.resurrected == 0,
                "seed 0x\(String(seed, radix: 16)): the first mismatches:\n\(runner.problems.prefix(Int(ProcessInfo.processInfo.environment["FOLIO_CONVERGENCE_SHOW"] ?? "") ?? 12).joined(separator: "\n"))")
        #expect(roundsRun >= 2, "only \(roundsRun) rounds fitted in the time budget")
    }
}
