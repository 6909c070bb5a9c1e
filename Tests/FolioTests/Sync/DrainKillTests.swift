@testable import Folio
import FolioCrashSupport
import FolioTestServer
import Foundation
import Testing

/// Acknowledgements recorded a window at a time (PROTOCOL.md, "Pushing a change") against a drain
/// SIGKILLed at random instants: the server must apply every queued command exactly once and in
/// the queue's order, none lost, whatever the window size and wherever the kill falls (before a
/// request, between an answer and its recording, in the middle of recording).
///
/// The expected outcome comes from a model of the queue written from the spec, not from Folio:
/// the commands are the test's own changes, one per entity per transaction, so the server's log of
/// applied changes must be exactly that list, in order, each under its own key.
@Suite struct DrainKillTests {
    /// One queued change as the model sees it.
    struct ModelCommand: Equatable, CustomStringConvertible {
        var sequence: UInt64
        var id: String
        var delete: Bool
        var value: Int
        var description: String { "\(sequence) \(delete ? "DELETE" : "PUT") \(id) \(delete ? "" : String(value))" }
    }

    static let commandCount = 600
    static let kills = 5

    @Test(arguments: [1, 25])
    func everyCommandIsAppliedOnceAcrossKills(batch: Int) async throws {
        let seed = UInt64(0xD2A1_0000) + UInt64(batch)
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder()
        let server = try TestServer()
        defer { server.stop() }
        server.randomFaults = RandomFaults(seed: seed, probability: 0.03)

        // The queue: creates, updates of the same entities (so a window holds several commands of
        // one entity, each needing the version the previous answer gave), deletes, recreates.
        let store = try await Store.open(at: folder.url, configuration: .testing(durability: .relaxed))
        let ids = (0..<40).map { "kill-\($0)" }
        var live: [String: SyncItem] = [:]
        var model: [ModelCommand] = []
        for value in 1...Self.commandCount {
            let id = ids[Int.random(in: 0..<ids.count, using: &random)]
            let delete = live[id] != nil && Int.random(in: 0..<6, using: &random) == 0
            let item = SyncItem(
                id: id, day: String(format: "2026-11-%02d", Int.random(in: 1...28, using: &random)),
                value: value, note: "change \(value)")
            try await store.write { tx in
                if delete { _ = try tx.delete(SyncItem.self, id: id) } else { try tx.upsert(item) }
            }
            live[id] = delete ? nil : item
            model.append(ModelCommand(sequence: UInt64(model.count + 1), id: id, delete: delete, value: delete ? 0 : value))
        }
        let queued = try await store.pendingCommands()
        #expect(queued.map(\.sequence) == model.map(\.sequence), "one command per change, numbered in order")
        try await store.close()

        // Drain from a child process killed at random instants, then once to the end.
        let logs = folder.url.deletingLastPathComponent()
        let arguments = [folder.url.path, server.baseURL.absoluteString, "--batch", String(batch), "--max-seconds", "100"]
        var requestsBeforeKill: [Int] = []
        var killedMidDrain = 0
        for round in 0..<Self.kills {
            let child = try CrashChild(arguments, logs: logs, name: "drain-kill-\(batch)-\(round)", executable: "folio-sync-child")
            // Killed mid-drain: after a random number of requests (a process starts slowly on a
            // busy machine, so a random delay alone would mostly kill it before it sends), then
            // a random few milliseconds more, so the kill falls anywhere in a request's cycle.
            // The wait runs on a thread of its own: a task of the test could be starved by the
            // other suites running in parallel and let the child drain everything first.
            let target = server.requestCount + Int.random(in: 1...(batch == 1 ? 60 : 3), using: &random)
            let extra = Int.random(in: 0...3000, using: &random)
            if await Self.killMidDrain(child, whenServerHas: target, requests: server, thenAfter: extra) { killedMidDrain += 1 }
            requestsBeforeKill.append(server.requestCount)
        }
        #expect(killedMidDrain >= 3, "only \(killedMidDrain) of \(Self.kills) kills fell before the drain ended")
        let last = try CrashChild(arguments, logs: logs, name: "drain-kill-\(batch)-last", executable: "folio-sync-child")
        let finished = await last.waitForExit(before: .now + .seconds(120))
        if !finished { last.kill() }
        #expect(finished && last.exitedCleanly, "the last drain: \(last.errorText)")

        // The server applied the model's commands, each once, in order, with the model's content.
        let applied = try server.appliedLog.map { change in
            let value = change.method == "DELETE" ? 0 : try SyncHarness.decoder.decode(SyncItem.self, from: change.body).value
            // A resolved conflict's resend carries `<key>@<version>`: still that command.
            return ModelCommand(
                sequence: change.key.flatMap(SyncConvergenceTests.sequence(ofKey:)) ?? 0, id: change.id,
                delete: change.method == "DELETE", value: value)
        }
        let firstDifference = zip(applied, model).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(
            applied == model,
            """
            applied \(applied.count) of \(model.count) commands; first difference at \(firstDifference.map { "\($0.offset): \($0.element.0) instead of \($0.element.1)" } ?? "the end")
            """)
        #expect(server.maxAppliedCountPerKey == 1)
        // No one else writes to the server: every command is made on the version its entity's
        // previous answer gave, and none meets a conflict (a kill only makes a command go again
        // under its own key, answered from memory).
        let resent = server.appliedLog.compactMap(\.key).filter { $0.contains("@") }
        #expect(resent.isEmpty, "\(resent.count) commands were sent again after a conflict, first \(resent.first ?? "")")
        let onServer = server.entities(SyncItem.collection)
        for id in ids {
            let remote = try onServer[id].map { try SyncHarness.decoder.decode(SyncItem.self, from: $0.json) }
            #expect(remote == live[id], "\(id)")
        }
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.pendingCommandCount() == 0)
        #expect(try await reopened.failedCommands().isEmpty)
        try await reopened.close()
        print(
            "drain kills: seed \(seed), batch \(batch), \(model.count) commands, \(killedMidDrain) of \(Self.kills) kills mid-drain, after \(requestsBeforeKill) requests, "
                + "\(server.requestCount) requests, \(server.firedFaultCount) injected faults, \(applied.count) applied (model: \(model.count)), "
                + (applied == model ? "each once, in order" : "NOT the model's commands"))
    }

    /// SIGKILLs `child` once the server has counted `target` requests (or after 20 s, or when
    /// the child has exited), `micros` later; says whether the child was still running. Waits on
    /// a thread, not in the cooperative pool.
    static func killMidDrain(
        _ child: CrashChild, whenServerHas target: Int, requests server: TestServer,
        thenAfter micros: Int
    ) async -> Bool {
        let pid = child.process.processIdentifier
        let running = await withCheckedContinuation { continuation in
            let thread = Thread {
                // kill(pid, 0) fails once the child has exited and Foundation has reaped it.
                let giveUp = ContinuousClock.now + .seconds(20)
                while server.requestCount < target && kill(pid, 0) == 0 && ContinuousClock.now < giveUp { usleep(200) }
                usleep(UInt32(micros))
                let alive = kill(pid, 0) == 0
                if alive { sendKill(pid) }
                continuation.resume(returning: alive)
            }
            thread.start()
        }
        child.kill()
        return running
    }
}
