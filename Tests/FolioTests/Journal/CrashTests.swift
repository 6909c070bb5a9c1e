@testable import Folio
import FolioCrashSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Process-level tests of the journal. The writers are separate processes (the executable
// `folio-crash-child`, Tests/CrashChild/main.swift, driven through CrashChild in Support/), so a
// SIGKILL really cuts a write, a sync or a checkpoint at a random instant, and two writers really
// are two processes sharing a flock. The invariant check is StoreCheck, in Support/.

@Suite struct CrashTests {
    /// Kills a writer at random instants (during open and recovery, a write, a sync, a checkpoint)
    /// and checks after each kill that the store recovers to a state where every acknowledged
    /// transaction is present, whole, and no other transaction is partly visible. Half the kills
    /// hit writers that push (`--outbox`): there, each change and its command are both present or
    /// both absent, and the queue keeps its order across the restarts (OutboxCheck).
    ///
    /// Each kill is checked on a copy of the killed folder (the child is dead, so the copy is
    /// exact), and the next child continues on the original: so kills also land in the recovery of
    /// a journal the previous kill left dirty. `FOLIO_CRASH_KILLS=5000` runs a longer campaign.
    @Test func killedWritersLeaveAWholeStore() async throws {
        let requested = ProcessInfo.processInfo.environment["FOLIO_CRASH_KILLS"].flatMap(Int.init)
        let kills = requested ?? 300
        // The default budget leaves room for the other suites running beside it on two cores.
        let budget: Duration = requested == nil ? .seconds(100) : .seconds(max(100, kills))
        let root = TemporaryFolder("crash")
        let logs = root.url.deletingLastPathComponent()
        var random = SplitMix64(seed: 0xF011_0C4A_5E00)
        var acked = ["full": 0, "relaxed": 0, "full-outbox": 0, "relaxed-outbox": 0]   // by folder
        var queues: [String: [UInt64: Data]] = [:]   // by folder: the outbox at the previous check
        var violations: [String] = []   // the first few of each kill, for the failure message
        var violationCount = 0
        let start = ContinuousClock.now
        var done = 0, outboxKills = 0
        // The first 50 kills are what the check needs, however long a loaded machine takes (CI
        // runs every suite at once on two cores; bounded at 20 minutes); kills past 50 fit the
        // budget.
        while done < kills && ContinuousClock.now - start < (done < 50 ? .seconds(1200) : budget) {
            // Four stores in turn: each durability, without and with the outbox (so half the kills
            // land in a store whose transactions also enqueue commands). The writer's name is its
            // durability; the folder's name also says whether it pushes.
            let durability = done % 2 == 0 ? "full" : "relaxed"
            let outbox = done % 4 >= 2
            let name = outbox ? durability + "-outbox" : durability
            let folder = root.url.appendingPathComponent(name)
            let copy = root.url.appendingPathComponent("checked")
            let child = try CrashChild(
                [
                    "write", folder.path, durability == "full" ? "1" : "2", "1000000", durability, durability,
                    "--delay-ms", "20", "--threshold-kib", "64", "--idle-ms", "25", "--idle-every", "8",
                ] + (outbox ? ["--outbox"] : []),
                logs: logs, name: "kill-\(done)")
            let delay = Int.random(in: 5...80, using: &random)
            try await Task.sleep(for: .milliseconds(delay))
            child.kill()
            done += 1
            if outbox { outboxKills += 1 }
            let label = "kill \(done) (\(name), after \(delay) ms)"
            if child.process.terminationReason != .uncaughtSignal {
                violations.append("\(label): the child exited by itself, status \(child.process.terminationStatus): \(child.errorText)")
                violationCount += 1
                continue
            }
            acked[name] = max(acked[name]!, child.acks.max() ?? 0)
            // Killed before it created the folder: nothing to check yet.
            guard FileManager.default.fileExists(atPath: folder.path) else { continue }
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: folder, to: copy)
            var problems = await StoreCheck.run(copy, acked: [durability: acked[name]!]).violations
            if outbox {
                // FIFO across restarts: the queue only grew since this folder's previous check.
                let queue = OutboxCheck.queue(in: copy)
                problems += OutboxCheck.onlyAppended(queues[name, default: [:]], queue)
                queues[name] = queue
            }
            violations += problems.prefix(5).map { "\(label): \($0)" }
            violationCount += problems.count
            try? FileManager.default.removeItem(at: child.output)
            try? FileManager.default.removeItem(at: child.errors)
        }
        print("crash test: \(done) kills (\(outboxKills) with the outbox), \(violationCount) violations")
        #expect(violations.isEmpty, "\(violations.prefix(20).joined(separator: "\n"))")
        #expect(done >= min(kills, 50), "only \(done) kills in 20 minutes")
    }

    /// The check itself must not pass vacuously: a writer that commits half a transaction (the
    /// child's `--tear-last`), and an acknowledged transaction that is missing, are both reported.
    @Test func theCheckNoticesATornTransaction() async throws {
        let root = TemporaryFolder("torn")
        let logs = root.url.deletingLastPathComponent()
        let child = try CrashChild(["write", root.url.path, "3", "20", "full", "T", "--tear-last", "1"], logs: logs, name: "torn")
        #expect(await child.waitForExit(before: .now + .seconds(30)), "the child did not finish in 30 s")
        #expect(child.exitedCleanly, "\(child.errorText)")
        let found = await StoreCheck.run(root.url, acked: ["T": 21])
        #expect(found.violations.contains { $0.contains("group member") }, "\(found.violations)")
        #expect(found.violations.contains { $0.contains("acknowledged transaction 21") }, "\(found.violations)")
    }
}
