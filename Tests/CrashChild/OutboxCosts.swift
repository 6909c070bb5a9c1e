import Folio
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `folio-crash-child outbox-costs prepare DIR EXTRA pending|local` / `… run DIR` / `… status DIR`:
// the stores and the operations of OutboxLengthTests, which runs `run` and `status` under strace
// and counts the files each phase opens. The entities live here only: the test reads the folders
// as files.
//
// `prepare` writes the same entities into either folder: `entries` e-1 … e-8 (two on each of the
// days 2026-03-01 … 2026-03-04) and `drafts` d-1, d-2, committed in one transaction between the
// two halves of EXTRA more (transactions of at most 5,000 upserts of distinct entities, on 280
// days of 2025, one in ten a draft). With `pending` the extra ones wait as commands too (EXTRA + 10
// pending); with `local` they are written as a local-only collection and only the ten wait. Nothing
// is ever sent: there is no server.
//
// `run` opens the store, reads 2026-03-02, asks e-3's sync status, commits e-3 (a new command)
// and d-1 (coalesced into its pending one), makes 100 more durable commits of new entries on 100
// days (a checkpoint after the 50th), and closes (a checkpoint). `status` opens the store,
// asks e-3's status again and closes. Before each step the child calls
// `access("/folio-phase/NAME")`, which fails and which strace logs, so the log can be cut into
// phases; it prints `phase NAME`, then what the step saw (`fetched N`, `status …`).

/// An entry of a day-partitioned push collection, without coalescing: every change is a command.
struct CostEntry: Entity, Equatable {
    static let collection = "entries"
    static let partitioning = Partitioning<CostEntry>.day(\.day)
    static let syncMode = SyncMode.push

    var id: String
    var day: String
    var text: String
}

/// A draft of a push collection that coalesces: an upsert replaces the entity's pending one.
struct CostDraft: Entity, Equatable {
    static let collection = "drafts"
    static let partitioning = Partitioning<CostDraft>.none
    static let syncMode = SyncMode.push(coalescing: true)

    var id: String
    var text: String
}

/// ``CostEntry`` as a local-only collection: the same entities without commands.
struct LocalCostEntry: Entity, Equatable {
    static let collection = CostEntry.collection
    static let partitioning = Partitioning<LocalCostEntry>.day(\.day)

    var id: String
    var day: String
    var text: String
}

/// ``CostDraft`` as a local-only collection.
struct LocalCostDraft: Entity, Equatable {
    static let collection = CostDraft.collection
    static let partitioning = Partitioning<LocalCostDraft>.none

    var id: String
    var text: String
}

/// Marks the start of a phase in the strace log, and in the output.
private func phase(_ name: String) {
    _ = access("/folio-phase/" + name, F_OK)
    say("phase \(name)")
}

func outboxCosts(_ arguments: Arguments) async throws {
    let values = arguments.positional
    guard values.count >= 3 else { fail("usage: outbox-costs prepare DIR EXTRA pending|local | run DIR | status DIR") }
    let url = URL(fileURLWithPath: values[2])
    // Only the close checkpoints, and nothing polls: every file a phase opens is its own.
    var configuration = Store.Configuration()
    configuration.checkpointDelay = .seconds(3600)
    configuration.outsideChangePollInterval = .seconds(3600)
    switch values[1] {
    case "prepare":
        guard values.count == 5, let extra = Int(values[3]), ["pending", "local"].contains(values[4]) else {
            fail("usage: outbox-costs prepare DIR EXTRA pending|local")
        }
        configuration.durability = .relaxed
        try await prepareCosts(url, extra: extra, pending: values[4] == "pending", configuration: configuration)
    case "run":
        phase("open")
        let store = try await Store.open(at: url, configuration: configuration)
        phase("read")
        say("fetched \(try await store.fetch(Query<CostEntry>(.day("2026-03-02"))).count)")
        phase("status")
        say("status \(try await store.syncStatus(of: CostEntry.self, id: "e-3"))")
        phase("commit")
        try await store.write { tx in try tx.upsert(CostEntry(id: "e-3", day: "2026-03-02", text: "changed")) }
        phase("coalesce")
        try await store.write { tx in try tx.upsert(CostDraft(id: "d-1", text: "changed")) }
        phase("commits")
        try await warmCommits(store, count: 100, checkpointEvery: 50)
        phase("close")
        try await store.close()
        phase("end")
        say("done")
    case "status":
        phase("fresh-open")
        let store = try await Store.open(at: url, configuration: configuration)
        phase("fresh-status")
        say("status \(try await store.syncStatus(of: CostEntry.self, id: "e-3"))")
        phase("fresh-close")
        try await store.close()
        // What `folio status` reads (the next command only), then the head `folio outbox list`
        // reads (10 commands here, which both folders have): without opening the store.
        phase("store-status")
        let status = try await Store.status(at: url, pendingLimit: 1)
        phase("outbox-head")
        let head = try await Store.status(at: url, pendingLimit: 10)
        phase("end")
        say("outbox \(status.pendingCount) pending, head of \(status.pending.count) and \(head.pending.count)")
        say("done")
    case "commits":
        // For profiling by hand (perf, strace -c): COUNT warm durable commits as `run`'s phase
        // `commits` makes them, a checkpoint after every EVERY (0: none), and their mean time.
        guard values.count == 5, let count = Int(values[3]), let every = Int(values[4]) else { fail("usage: outbox-costs commits DIR COUNT EVERY") }
        let store = try await Store.open(at: url, configuration: configuration)
        try await warmCommits(store, count: 2, checkpointEvery: 0, first: 1000)
        phase("commits")
        let start = ContinuousClock.now
        try await warmCommits(store, count: count, checkpointEvery: every)
        say("per commit \((ContinuousClock.now - start) / count)")
        phase("close")
        try await store.close()
        say("done")
    default:
        fail("usage: outbox-costs prepare DIR EXTRA pending|local | run DIR | status DIR")
    }
}

/// `count` durable commits, each of a new entry on another day of 2025 (another partition file
/// loaded each time, as an app editing its recent days does), with a checkpoint after every
/// `checkpointEvery` of them (0: none).
private func warmCommits(_ store: Store, count: Int, checkpointEvery: Int, first: Int = 0) async throws {
    let days = (1...10).flatMap { month in (1...28).map { String(format: "2025-%02d-%02d", month, $0) } }
    for n in first..<(first + count) {
        try await store.write { tx in try tx.upsert(CostEntry(id: "c-\(n)", day: days[(n * 2) % days.count], text: "commit \(n)")) }
        if checkpointEvery > 0, (n - first + 1) % checkpointEvery == 0 { try await store.checkpoint() }
    }
}

/// The store of `prepare`, in three sessions (each close checkpoints): the extra entities' first
/// half, the ten common ones, the second half. `pending`: the extra entities are written through
/// the push types, each change with its command; `local`: through local-only twins of them (same
/// collections, fields and partitions: the same files, no commands). Both folders go through the
/// same sessions, so their indexes and histories are alike too, and no collection changes its
/// sync mode within a process.
private func prepareCosts(_ url: URL, extra: Int, pending: Bool, configuration: Store.Configuration) async throws {
    let days = (1...10).flatMap { month in (1...28).map { String(format: "2025-%02d-%02d", month, $0) } }
    func addExtra(_ range: Range<Int>, to store: Store) async throws {
        for start in stride(from: range.lowerBound, to: range.upperBound, by: 5_000) {
            try await store.write { tx in
                for n in start..<min(start + 5_000, range.upperBound) {
                    let id = "x-\(n)", day = days[n % days.count]
                    switch (n % 10 == 9, pending) {
                    case (true, true): try tx.upsert(CostDraft(id: id, text: "extra draft \(n)"))
                    case (true, false): try tx.upsert(LocalCostDraft(id: id, text: "extra draft \(n)"))
                    case (false, true): try tx.upsert(CostEntry(id: id, day: day, text: "extra entry \(n)"))
                    case (false, false): try tx.upsert(LocalCostEntry(id: id, day: day, text: "extra entry \(n)"))
                    }
                }
            }
        }
    }
    func addCommon(to store: Store) async throws {
        try await store.write { tx in
            for n in 1...8 {
                try tx.upsert(CostEntry(id: "e-\(n)", day: "2026-03-0\((n + 1) / 2)", text: "entry \(n)"))
            }
            for n in 1...2 { try tx.upsert(CostDraft(id: "d-\(n)", text: "draft \(n)")) }
        }
    }
    for session in 0..<3 {
        let store = try await Store.open(at: url, configuration: configuration)
        switch session {
        case 0: try await addExtra(0..<extra / 2, to: store)
        case 1: try await addCommon(to: store)
        default: try await addExtra(extra / 2..<extra, to: store)
        }
        try await store.close()
    }
    say("done")
}
