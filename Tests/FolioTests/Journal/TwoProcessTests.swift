@testable import Folio
import Foundation
import Testing

/// Two writer processes and a reader process on one folder at the same time (the children are
/// `folio-crash-child`; CrashTests.swift holds the shared check). The writers take turns through
/// the flock, checkpoint each other's records (a small `checkpointThreshold` makes that happen
/// often), and the reader fetches everything while they do. A second test has two writers push
/// (`--outbox`): one queue, numbered by both processes (OutboxCheck is in OutboxProcessTests.swift).
@Suite struct TwoProcessTests {
    static let transactions = 1000
    /// Fewer when pushing: each command is a file, written with an fsync at a checkpoint.
    static let pushedTransactions = 200
    /// Everything must finish in this time, or the children are killed and the test fails. The
    /// work is fixed: a slow disk takes longer (1,000 synced commits took over 120 s on a loaded
    /// machine, when the writers' own limit of 120 s cut them short), it never does less.
    static let timeout: Duration = .seconds(900)

    @Test func twoWritersAndAReaderLoseNothing() async throws {
        let root = TemporaryFolder("shared")
        let logs = root.url.deletingLastPathComponent()
        let stopFile = logs.appendingPathComponent("stop-reader")
        let deadline = ContinuousClock.now + Self.timeout
        let start = ContinuousClock.now

        func writer(_ name: String, seed: Int) throws -> CrashChild {
            try CrashChild(
                [
                    "write", root.url.path, "\(seed)", "\(Self.transactions)", "full", name,
                    "--delay-ms", "20", "--threshold-kib", "256", "--max-seconds", "\(Self.timeout.components.seconds)",
                ], logs: logs, name: name)
        }
        // The reader is started first, so it is usually reading before the writers commit; it
        // stops when the stop file appears (or after the timeout, as a backstop).
        let reader = try CrashChild(
            [
                "read", root.url.path, "\(Self.timeout.components.seconds)",
                "--until-file", stopFile.path, "--pause-ms", "20",
            ], logs: logs, name: "reader")
        let writers = [try writer("A", seed: 101), try writer("B", seed: 202)]
        defer { for child in writers + [reader] { child.kill() } }   // only if something went wrong

        var finished = true
        for child in writers { finished = await child.waitForExit(before: deadline) && finished }
        _ = FileManager.default.createFile(atPath: stopFile.path, contents: nil)
        finished = await reader.waitForExit(before: min(deadline, .now + .seconds(10))) && finished
        guard finished else {
            Issue.record("the processes did not finish within \(Self.timeout); killed them")
            return
        }

        var acked: [String: Int] = [:]
        for (name, child) in zip(["A", "B"], writers) {
            #expect(child.exitedCleanly, "writer \(name): \(child.errorText)")
            let acks = child.acks
            // Acks come in order, one per transaction, from 1 to the end, without a gap.
            #expect(acks == Array(1...Self.transactions), "writer \(name) acknowledged \(acks.count) transactions, last \(acks.last ?? 0)")
            acked[name] = acks.last ?? 0
        }
        #expect(reader.exitedCleanly, "reader: \(reader.errorText)")
        let summary = reader.lines.last { $0.hasPrefix("reads ") } ?? "no summary"
        let readerViolations = reader.lines.filter { $0.hasPrefix("violation") }
        let reads = Int(summary.split(separator: " ").dropFirst().first ?? "") ?? 0
        #expect(
            summary.hasSuffix(" violations 0") && readerViolations.isEmpty,
            "the reader saw a partial state: \(summary)\n\(readerViolations.prefix(20).joined(separator: "\n"))")
        #expect(reads >= 5, "the reader did only \(reads) reads: \(summary)")

        let found = await StoreCheck.run(root.url, acked: acked)
        #expect(found.violations.isEmpty, "\(found.violations.prefix(20).joined(separator: "\n"))")
        #expect(found.last == acked, "each writer's last transaction in the store must be its last ack")
        print(
            "two processes: \(acked.values.reduce(0, +)) transactions, \(reads) reads, "
                + "\(found.violations.count + readerViolations.count) violations, \(ContinuousClock.now - start)")
    }

    /// Two writer processes push at once; the queue must number their commands uniquely, keep each
    /// writer's in commit order, and come back identical after a restart.
    @Test func twoPushingWritersKeepOneQueueInCommitOrder() async throws {
        let root = TemporaryFolder("pushed")
        let logs = root.url.deletingLastPathComponent()
        let start = ContinuousClock.now
        let deadline = start + Self.timeout
        func writer(_ name: String, seed: Int) throws -> CrashChild {
            try CrashChild(
                [
                    "write", root.url.path, "\(seed)", "\(Self.pushedTransactions)", "full", name,
                    "--delay-ms", "20", "--threshold-kib", "128", "--outbox", "--max-seconds", "\(Self.timeout.components.seconds)",
                ], logs: logs, name: name)
        }
        let writers = [try writer("A", seed: 303), try writer("B", seed: 404)]
        defer { for child in writers { child.kill() } }   // only if something went wrong
        var finished = true
        for child in writers { finished = await child.waitForExit(before: deadline) && finished }
        guard finished else {
            Issue.record("the writers did not finish within \(Self.timeout); killed them")
            return
        }
        var acked: [String: Int] = [:]
        for (name, child) in zip(["A", "B"], writers) {
            #expect(child.exitedCleanly, "writer \(name): \(child.errorText)")
            #expect(child.acks == Array(1...Self.pushedTransactions), "writer \(name) acknowledged \(child.acks.count) transactions")
            acked[name] = child.acks.last ?? 0
        }
        // StoreCheck includes OutboxCheck: unique numbers, files, whole transactions in commit order.
        let found = await StoreCheck.run(root.url, acked: acked)
        #expect(found.violations.isEmpty, "\(found.violations.prefix(20).joined(separator: "\n"))")
        #expect(found.last == acked, "each writer's last transaction in the store must be its last ack")

        // FIFO across restarts: the queue read before a close is the queue read after reopening.
        var queues: [[OutboxCommand]] = []
        for _ in 0..<2 {
            let store = try await Store.open(at: root.url)
            queues.append(try await store.pendingCommands())
            try await store.close()
        }
        #expect(queues[0] == queues[1], "the queue changed across a restart")
        #expect(queues[0].map(\.sequence) == Array(1...UInt64(queues[0].count)), "numbers must be 1, 2, 3, … with no gap")
        // The writers must really have interleaved, or this proves nothing about two processes.
        let owners = queues[0].map { $0.entityID?.prefix { $0 != "-" } ?? "" }
        let switches = zip(owners, owners.dropFirst()).filter { $0 != $1 }.count
        #expect(switches >= 10, "the writers' commands interleave only \(switches) times: they did not run concurrently")
        print(
            "two processes with the outbox: \(acked.values.reduce(0, +)) transactions, \(queues[0].count) commands, "
                + "\(switches) switches between writers in the queue, \(found.violations.count) violations, \(ContinuousClock.now - start)")
    }
}
