// folio-crash-child: a separate process for the journal's process-level tests (CrashTests,
// TwoProcessTests, LiveCopyTests). The tests SIGKILL it at random instants, run two of it at once,
// or copy its folder while it writes, then check the store with their own copy of the invariant.
//
//   folio-crash-child write DIR SEED COUNT DURABILITY WRITER [--delay-ms 20] [--threshold-kib 64]
//                           [--idle-ms 0] [--idle-every 8] [--tear-last 0] [--max-seconds 900] [--outbox]
//                           [--reopen-every 0] [--fixed-days] [--print-changes] [--checkpoint-one-in 0] [--fill]
//   folio-crash-child read DIR SECONDS [--until-file PATH] [--pause-ms 0]
//   folio-crash-child watch DIR SECONDS COUNT
//   folio-crash-child dump DIR DAY[,DAY…]        (Dump.swift: for the fuzz test)
//   folio-crash-child append DIR COUNT [--until-file PATH]   (Append.swift: for the editor race)
//
// `write` runs COUNT transactions as WRITER (durability `full` or `relaxed`) and prints `ack N`
// after each `write` returns. `--idle-ms` pauses that long after about one transaction in
// `--idle-every`, so idle checkpoints (`--delay-ms` after the last commit) happen between bursts.
// `--tear-last 1` commits only the first slot of the last transaction, and not its ledger: a
// deliberately torn transaction, so the tests can show that their check notices one.
// `--outbox` (a flag, no value) writes the same data to the collection `pushed` instead of `slots`
// (ledger included): its sync mode is push, without coalescing, so every transaction also enqueues
// one command per changed entity, the ledger's included, and the tests check the outbox against
// the entities (OutboxProcessTests.swift). A folder is written in one mode only: the two
// collections have separate ledgers, so mixing them would restart n at 1.
// `--reopen-every K` closes the store and opens it again after every K transactions: a short-lived
// process (a command-line tool) that checkpoints at every close (LiveCopyToolsTests).
// `--fixed-days` (a flag) keeps every slot, the ledger included, in one day file (from its number),
// so no transaction moves one between files. `--print-changes` (a flag) prints, after each `ack`,
// `changed N begun NANOS up ID,… del ID,…`: the slots transaction N changed (a delete of an absent
// slot changes nothing and is left out), and the monotonic clock just before its `write` began.
// `--checkpoint-one-in K` checkpoints after about one transaction in K (from the seed), on top of
// the idle and threshold checkpoints (JournalGrowthObservationTests). `--fill` (a flag): a writer
// whose ledger does not exist yet first writes all its slots and its ledger, as transaction 0, in
// one transaction, and prints `filled` (with COUNT 0, a store to observe from a known start; the
// collection `slots` only, not with `--outbox`).
// `read` fetches every slot again and again for SECONDS (or until PATH exists), checks each
// snapshot, prints `violation …` lines and finally `reads N violations V`; `--pause-ms` sleeps
// between reads, leaving the writers some CPU. Both modes stop when their parent (the test
// process) is gone, and `write` after `--max-seconds`, so a crashed test leaves no writer behind.
//
// The data: each writer owns 40 slots `WRITER-0` … `WRITER-39` and one ledger slot `WRITER-ledger`.
// Transaction n of a writer upserts 2–6 of its slots on random days (moving them between day
// files) and, one time in four, deletes one more of them; every slot it writes carries
// `transaction = n` and `group` = the ids it touched (deleted one included) plus the ledger id.
// The ledger is written by every transaction: its `transaction` is the writer's last one, and its
// `deletedAt` maps each deleted id to the transaction that last deleted it. That makes a snapshot
// checkable on its own (see `groupViolations(in:)` in Tests/CrashSupport): a slot of transaction n whose group member is
// older than n, or missing without a deletion at n or later, shows a transaction partly visible.
// n continues from the ledger across restarts, and a transaction's choices depend only on
// (SEED, n), so a transaction that a kill cut short is planned the same way when rerun.

import Folio
import FolioCrashSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

let poolSize = 40
/// 15 days across two months, so slots move between day files and month folders.
let days = (25...31).map { "2026-01-\($0)" } + (1...8).map { String(format: "2026-02-%02d", $0) }

func ledgerID(_ writer: String) -> String { Slot.ledgerID(writer) }

func say(_ line: String) {
    // write(2) on every line: a line the parent reads is a line that was printed before the kill.
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("folio-crash-child: " + message + "\n").utf8))
    exit(1)
}

/// Positional arguments, `--name value` options, and the flags (options without a value) below.
struct Arguments {
    static let flagNames: Set<String> = ["outbox", "fixed-days", "print-changes", "fill"]
    var positional: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []

    init(_ raw: [String]) {
        var index = 0
        while index < raw.count {
            if raw[index].hasPrefix("--"), Self.flagNames.contains(String(raw[index].dropFirst(2))) {
                flags.insert(String(raw[index].dropFirst(2)))
                index += 1
            } else if raw[index].hasPrefix("--"), index + 1 < raw.count {
                options[String(raw[index].dropFirst(2))] = raw[index + 1]
                index += 2
            } else {
                positional.append(raw[index])
                index += 1
            }
        }
    }

    func int(_ name: String, default value: Int) -> Int {
        guard let text = options[name] else { return value }
        guard let number = Int(text) else { fail("--\(name) needs an integer, got \(text)") }
        return number
    }
}

/// What a transaction changed: the slots it upserted (its ledger included) and those its deletes
/// removed (an absent slot's delete changes nothing).
struct TransactionChanges {
    var upserted: [String] = []
    var deleted: [String] = []
}

/// The day a slot stays on with `--fixed-days`: from its number (the ledger's is the first day).
func fixedDay(_ id: String) -> String {
    days[(Int(id.split(separator: "-").last ?? "") ?? 0) % days.count]
}

/// One transaction: read the ledger, plan from (seed, n), stage everything, return n.
func runTransaction<S: SlotRecord>(
    _ tx: Transaction, _ type: S.Type, seed: UInt64, writer: String, tear: Bool = false, fixedDays: Bool = false,
    changes: inout TransactionChanges
) throws -> Int {
    var ledger =
        try tx.get(S.self, id: ledgerID(writer))
        ?? S(id: ledgerID(writer), day: days[0], transaction: 0, group: [], writer: writer, deletedAt: [:])
    let n = ledger.transaction + 1
    var random = SplitMix64(seed: seed ^ (UInt64(n) &* 0xD6E8_FEB8_6659_FD93))
    let upserts = Int.random(in: 2...6, using: &random)
    let deletes = Int.random(in: 0..<4, using: &random) == 0 ? 1 : 0
    let chosen = Array((0..<poolSize).shuffled(using: &random).prefix(upserts + deletes)).map { "\(writer)-\($0)" }
    let group = (chosen + [ledgerID(writer)]).sorted()
    for id in chosen.prefix(upserts) {
        let day = days.randomElement(using: &random)!
        try tx.upsert(S(id: id, day: fixedDays ? fixedDay(id) : day, transaction: n, group: group, writer: writer, deletedAt: [:]))
        changes.upserted.append(id)
        if tear { return n }
    }
    for id in chosen.dropFirst(upserts) {
        // Recorded even if the slot did not exist: "absent at n" is what the check needs. (Deleting
        // an absent slot changes nothing, so it enqueues no command.)
        if try tx.delete(S.self, id: id) { changes.deleted.append(id) }
        ledger.deletedAt[id] = n
    }
    let ledgerDay = days.randomElement(using: &random)!
    ledger.day = fixedDays ? fixedDay(ledgerID(writer)) : ledgerDay
    ledger.transaction = n
    ledger.group = group
    try tx.upsert(ledger)
    changes.upserted.append(ledgerID(writer))
    return n
}

func write(_ arguments: Arguments) async throws {
    let values = arguments.positional
    guard values.count == 6, let seed = UInt64(values[2]), let count = Int(values[3]) else {
        fail("usage: write DIR SEED COUNT DURABILITY WRITER [options]")
    }
    let writer = values[5]
    var configuration = Store.Configuration()
    switch values[4] {
    case "full": configuration.durability = .full
    case "relaxed": configuration.durability = .relaxed
    default: fail("durability must be full or relaxed, got \(values[4])")
    }
    configuration.checkpointDelay = .milliseconds(arguments.int("delay-ms", default: 20))
    configuration.checkpointThreshold = arguments.int("threshold-kib", default: 64) << 10
    let idle = arguments.int("idle-ms", default: 0)
    let idleEvery = max(1, arguments.int("idle-every", default: 8))
    // Pauses are not part of the data, so their randomness need not be reproducible.
    var pauses = SplitMix64(seed: UInt64(getpid()) ^ seed)

    let tearLast = arguments.int("tear-last", default: 0) != 0
    let outbox = arguments.flags.contains("outbox")
    let parent = getppid()
    // A backstop only: a test that starves on a loaded machine must not find its writer gone by
    // itself (120 s was reached in a full run, before a kill the test had planned at 5 ms).
    let deadline = ContinuousClock.now + .seconds(arguments.int("max-seconds", default: 900))

    let reopenEvery = arguments.int("reopen-every", default: 0)
    let fixedDays = arguments.flags.contains("fixed-days")
    let printChanges = arguments.flags.contains("print-changes")
    let checkpointOneIn = arguments.int("checkpoint-one-in", default: 0)
    var checkpoints = SplitMix64(seed: seed ^ 0xC4EC_4B01)
    say("start at \(DispatchTime.now().uptimeNanoseconds)")
    var store = try await Store.open(at: URL(fileURLWithPath: values[1]), configuration: configuration)
    say("opened at \(DispatchTime.now().uptimeNanoseconds)")
    if arguments.flags.contains("fill") {
        let filled = try await store.write { tx in
            guard try tx.get(Slot.self, id: ledgerID(writer)) == nil else { return false }
            let ids = (0..<poolSize).map { "\(writer)-\($0)" }
            for id in ids {
                try tx.upsert(Slot(id: id, day: fixedDays ? fixedDay(id) : days[0], transaction: 0, group: [id], writer: writer))
            }
            try tx.upsert(Slot(id: ledgerID(writer), day: days[0], transaction: 0, group: [], writer: writer))
            return true
        }
        if filled { say("filled") }
    }
    for index in 0..<count {
        guard getppid() == parent, ContinuousClock.now < deadline else { break }
        if reopenEvery > 0, index > 0, index % reopenEvery == 0 {
            try await store.close()
            store = try await Store.open(at: URL(fileURLWithPath: values[1]), configuration: configuration)
        }
        let tear = tearLast && index == count - 1
        let begun = DispatchTime.now().uptimeNanoseconds
        let (n, changes) = try await store.write { tx in
            var changes = TransactionChanges()
            let n =
                outbox
                ? try runTransaction(tx, PushedSlot.self, seed: seed, writer: writer, tear: tear, fixedDays: fixedDays, changes: &changes)
                : try runTransaction(tx, Slot.self, seed: seed, writer: writer, tear: tear, fixedDays: fixedDays, changes: &changes)
            return (n, changes)
        }
        say("ack \(n)")
        say("acked \(n) at \(DispatchTime.now().uptimeNanoseconds)")
        if printChanges {
            say("changed \(n) begun \(begun) up \(changes.upserted.joined(separator: ",")) del \(changes.deleted.joined(separator: ","))")
        }
        if checkpointOneIn > 0, checkpoints.next() % UInt64(checkpointOneIn) == 0 {
            try await store.checkpoint()
            say("checkpointed")
        }
        if idle > 0, Int.random(in: 0..<idleEvery, using: &pauses) == 0 {
            try await Task.sleep(for: .milliseconds(idle))
        }
    }
    try await store.close()
    say("done")
    say("done at \(DispatchTime.now().uptimeNanoseconds)")
}

func read(_ arguments: Arguments) async throws {
    let values = arguments.positional
    guard values.count == 3, let seconds = Double(values[2]) else { fail("usage: read DIR SECONDS [--until-file PATH]") }
    let stopFile = arguments.options["until-file"]
    let pause = arguments.int("pause-ms", default: 0)
    let parent = getppid()
    let store = try await Store.open(at: URL(fileURLWithPath: values[1]))
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    var reads = 0
    var found = 0
    var lastSeen: [String: Int] = [:]   // writer → its ledger's transaction in the last snapshot
    while ContinuousClock.now < deadline, reads < 1_000_000, getppid() == parent {
        if let stopFile, FileManager.default.fileExists(atPath: stopFile) { break }
        var problems: [String]
        do {
            let slots = try await store.fetch(Query<Slot>(.all))
            problems = groupViolations(in: slots)
            // Reads must never go back in time: a writer's ledger only moves forward.
            for ledger in slots where ledger.id == ledgerID(ledger.writer) {
                if ledger.transaction < lastSeen[ledger.writer, default: 0] {
                    problems.append("writer \(ledger.writer) went back from transaction \(lastSeen[ledger.writer]!) to \(ledger.transaction)")
                }
                lastSeen[ledger.writer] = ledger.transaction
            }
        } catch {
            problems = ["fetch failed: \(error)"]
        }
        reads += 1
        found += problems.count
        for problem in problems.prefix(5) { say("violation read \(reads): \(problem)") }
        if pause > 0 { try await Task.sleep(for: .milliseconds(pause)) }
    }
    try await store.close()
    say("reads \(reads) violations \(found)")
}

/// Observes the store; prints `ready` once subscribed, then `change COLLECTION ORIGIN at NANOS`
/// (the system's monotonic clock, comparable with the writer's `acked … at`) for each change set
/// from another process, until SECONDS pass or COUNT were seen.
func watch(_ arguments: Arguments) async throws {
    let values = arguments.positional
    guard values.count == 4, let seconds = Double(values[2]), let count = Int(values[3]) else { fail("usage: watch DIR SECONDS COUNT") }
    let parent = getppid()
    // No polling: only the folder watcher can make the announcement quick.
    var configuration = Store.Configuration()
    configuration.outsideChangePollInterval = .seconds(3600)
    // Folio's warnings and errors go to stderr, where the test shows them when it fails.
    configuration.logHandler = { message in
        guard message.level == .warning || message.level == .error || ProcessInfo.processInfo.environment["FOLIO_WATCH_DEBUG"] != nil else { return }
        FileHandle.standardError.write(Data("folio \(message.level): \(message.text) \(message.path ?? "")\n".utf8))
    }
    let store = try await Store.open(at: URL(fileURLWithPath: values[1]), configuration: configuration)
    let changes = await store.changes()
    say("ready")
    say("ready at \(DispatchTime.now().uptimeNanoseconds)")
    let watching = Task {
        var seen = 0
        for await change in changes where change.origin != .thisProcess {
            say("change \(change.collection) \(change.origin.rawValue) at \(DispatchTime.now().uptimeNanoseconds)")
            seen += 1
            if seen >= count { break }
        }
    }
    // The parent gone or SECONDS passed: stop (cancelling ends the iteration of the stream).
    let timer = Task {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline, getppid() == parent {
            do { try await Task.sleep(for: .milliseconds(50)) } catch { return }
        }
        watching.cancel()
    }
    await watching.value
    timer.cancel()
    try await store.close()
    say("done")
    say("done at \(DispatchTime.now().uptimeNanoseconds)")
}

let arguments = Arguments(Array(CommandLine.arguments.dropFirst()))
do {
    switch arguments.positional.first {
    case "write": try await write(arguments)
    case "read": try await read(arguments)
    case "watch": try await watch(arguments)
    case "dump": try await dumpStore(arguments)
    case "append": try await append(arguments)
    case "outbox-costs": try await outboxCosts(arguments)
    default: fail("usage: folio-crash-child write|read|watch|dump|append …")
    }
} catch {
    fail("\(error)")
}
