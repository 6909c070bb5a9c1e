@testable import Folio
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the write path costs in syncs and context switches, counted from Folio's own record of
/// its disk steps (each `sync` step is one fsync/fdatasync, each `syncFileSystem` one syncfs).
/// The sync counts are asserted (they do not depend on the machine); times and context switches
/// are printed, never asserted.
@Suite(.serialized) struct WriteCostTests {
    static func syncCount(_ steps: [IOStep]) -> Int {
        steps.filter {
            switch $0 {
            case .sync, .syncFileSystem: true
            default: false
            }
        }.count
    }

    /// The synced paths, by kind, for a printed breakdown.
    static func breakdown(_ steps: [IOStep]) -> String {
        var counts: [String: Int] = [:]
        for step in steps {
            switch step {
            case .sync(let path):
                let kind =
                    path.hasPrefix(".folio/versions")
                    ? "kept version"
                    : path.hasPrefix(".folio/tmp")
                        ? "temp file"
                        : path.hasPrefix("outbox") ? "outbox" : path == StoreLayout.journal ? "journal" : path
                counts[kind, default: 0] += 1
            case .syncFileSystem: counts["syncfs", default: 0] += 1
            default: continue
            }
        }
        return counts.sorted { $0.value > $1.value }.prefix(8).map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    /// 200 single-todo transactions, each on another day (200 partition files, 200 command files),
    /// then the checkpoint: the syncs it takes, per transaction. The target of issue 15 is 0.05:
    /// one barrier for the whole checkpoint, not one sync per file.
    @Test func aCheckpointTakesAFewSyncsWhateverItWrites() async throws {
        let folder = TemporaryFolder()
        let steps = IORecorder()
        let store = try await Store.open(at: folder.url, configuration: .testing(hook: steps.hook))
        steps.reset()
        let transactions = 200
        var start = ContinuousClock.now
        for index in 0..<transactions {
            let day = 1 + index % 28
            let month = 1 + index / 28
            let date = String(format: "2025-%02d-%02d", month, day)
            try await store.write { tx in try tx.upsert(todo("Task \(index)", on: date)) }
        }
        let commits = ContinuousClock.now - start
        let commitSyncs = Self.syncCount(steps.steps)
        let commitBreakdown = Self.breakdown(steps.steps)
        steps.reset()
        start = ContinuousClock.now
        try await store.checkpoint()
        let checkpoint = ContinuousClock.now - start
        let checkpointSyncs = Self.syncCount(steps.steps)
        print("write cost: commit syncs: \(commitBreakdown); checkpoint syncs: \(Self.breakdown(steps.steps))")
        let perTransaction = Double(checkpointSyncs) / Double(transactions)
        print(
            "write cost: \(transactions) txns, commits \(commitSyncs) syncs in \(commits); checkpoint \(checkpointSyncs) syncs "
                + "(\(perTransaction) per txn) in \(checkpoint)")
        #expect(try await store.pendingCommandCount() == transactions)
        try await store.close()
        #expect(commitSyncs == transactions, "one journal sync per durable commit")
        // Without syncfs (Apple platforms), the barrier syncs each file: this holds on Linux.
        if Platform.canSyncFileSystem { #expect(perTransaction <= 0.05, "checkpoint syncs per transaction: \(perTransaction)") }
    }

    /// A bulk import: 10,000 todos over a year in one transaction, each queuing its command, then
    /// the checkpoint (365 day files, 10,000 command files). Syncs asserted, times printed.
    @Test func aBulkImportWithItsOutboxTakesAFewSyncs() async throws {
        let folder = TemporaryFolder()
        let steps = IORecorder()
        var configuration = Store.Configuration.testing(hook: steps.hook)
        configuration.checkpointThreshold = 1 << 30
        let store = try await Store.open(at: folder.url, configuration: configuration)
        steps.reset()
        let todos = (0..<10_000).map { index in
            todo("Imported \(index)", on: String(format: "2025-%02d-%02d", 1 + index % 12, 1 + (index / 12) % 28))
        }
        var start = ContinuousClock.now
        try await store.write { tx in for item in todos { try tx.upsert(item) } }
        let commit = ContinuousClock.now - start
        start = ContinuousClock.now
        try await store.checkpoint()
        let checkpoint = ContinuousClock.now - start
        let syncs = Self.syncCount(steps.steps)
        print("bulk import: 10,000 todos + 10,000 commands: commit \(commit), checkpoint \(checkpoint), \(syncs) syncs (\(Self.breakdown(steps.steps)))")
        #expect(try await store.pendingCommandCount() == todos.count)
        try await store.close()
        if Platform.canSyncFileSystem { #expect(syncs <= 10, "syncs of a bulk import: \(syncs)") }
    }

    /// Voluntary context switches of 1,000 durable commits by one writer (no one else waits): the
    /// committing thread should append and sync itself, not hand the sync to another task.
    @Test func contextSwitchesOfADurableCommit() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(todo("Warm up", on: "2026-11-20")) }
        let commits = 1000
        let before = ResourceUsage.now()
        let start = ContinuousClock.now
        for index in 0..<commits {
            try await store.write { tx in try tx.upsert(todo("Task \(index)", on: "2026-11-21")) }
        }
        let elapsed = ContinuousClock.now - start
        let after = ResourceUsage.now()
        let voluntary = Double(after.voluntary - before.voluntary) / Double(commits)
        let involuntary = Double(after.involuntary - before.involuntary) / Double(commits)
        let cpu = Double(after.cpuMicroseconds - before.cpuMicroseconds) / Double(commits)
        print(
            "durable commit: \(voluntary) voluntary, \(involuntary) involuntary context switches, \(cpu) µs CPU per commit "
                + "(process-wide, \(commits) commits in \(elapsed))")
        try await store.close()
    }
}

/// The process's resource usage (getrusage), for printed measurements.
struct ResourceUsage {
    var voluntary: Int
    var involuntary: Int
    var cpuMicroseconds: Int
    /// The process's peak resident memory so far, in bytes.
    var peakResidentBytes: Int

    static func now() -> ResourceUsage {
        var usage = rusage()
        #if canImport(Glibc)
        _ = getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        _ = getrusage(RUSAGE_SELF, &usage)
        #endif
        let cpu =
            (Int(usage.ru_utime.tv_sec) + Int(usage.ru_stime.tv_sec)) * 1_000_000
            + Int(usage.ru_utime.tv_usec) + Int(usage.ru_stime.tv_usec)
        #if canImport(Darwin)
        let peak = Int(usage.ru_maxrss)   // bytes there, kilobytes on Linux
        #else
        let peak = Int(usage.ru_maxrss) * 1024
        #endif
        return ResourceUsage(
            voluntary: Int(usage.ru_nvcsw), involuntary: Int(usage.ru_nivcsw), cpuMicroseconds: cpu,
            peakResidentBytes: peak)
    }
}
