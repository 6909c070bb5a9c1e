@testable import Folio
import FolioCrashSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// No observer misses a commit, whatever the journal's growth strategy (issue 29).
///
/// The journal keeps free space (``Journal/freeSpace``: a record that passes the file's end is
/// followed by zeros that later records overwrite), and a commit does not `fstat` the journal.
/// An observer must see every commit of other processes however the file grows, so each strategy
/// runs the same seeded work: `FOLIO_JOURNAL_FREE_SPACE` 65536 (the default), 0 (plain appends: the
/// file ends where its last record does) and 100 (most records straddle the free space's end).
///
/// Per strategy, three `folio-crash-child write` processes (durability full, relaxed, and full
/// reopening the store every 10 commits, as a tool does) commit a fixed number of seeded
/// transactions each to one store whose slots they filled first (slots on fixed days, deletes
/// among them), checkpointing at random, past a journal threshold, when idle and at each close,
/// so the journal is reset and grows again. Six stores of this process observe (`changes()`,
/// the folder watcher only, no polling): one read every file when it subscribed, one subscribed
/// without reading (each file is loaded when the first record it reads touches it, 57c1654's
/// case), and four subscribe the same way once 50, 80, 90 and 95% of the commits are acknowledged
/// (their first loads come among the slots' last changes). A sampler notes where the journal ends.
///
/// Once the writers are done, each observer's change sets, replayed (inserted, updated, deleted)
/// from what it knew when it subscribed, must describe every acknowledged commit:
/// - what exists is what the store's files hold (read by a read-only store), for every slot the
///   observer knows of: all for the one that read everything; for the others, the slots it was
///   told of (the first announcement of a slot in a file it never read may be of a state it
///   could not compare with: `updated`, earlier existence unknown);
/// - every slot that exists at the end and was changed after the observer subscribed was announced
///   at least once after its last change began (the writer's monotonic clock before its `write`;
///   a change set received later cannot come from a read made before that change, unless it was
///   delayed: a missed last change then goes unnoticed only if an announcement of the change
///   before it is delivered after the last one began). A slot deleted last needs no announcement
///   after that: an insert and a delete read together change nothing for observers, and a delete
///   missed shows in what exists. (This found a real miss: an observer that did not read a file
///   first took a record for no change when the file, loaded for an earlier record of the batch
///   it read, already held it: another process checkpointed it meanwhile.)
/// - once the state of a slot is known, nothing inserted while it exists or deleted while it does
///   not; no slot announced more often than commits changed it (once more for a slot first told
///   of from a file never read);
/// - every change set comes from `otherProcess` (this found files read while another process's
///   checkpoint replaced them told as outside edits);
/// - all of it from the watcher alone within 15 s of the last commit (a read after that only tells
///   a late watcher from a commit never announced).
/// It also checks the strategy took effect (the journal's end, sampled: never zeros with plain
/// appends; zeros after the records otherwise) and that the writers' account of what exists
/// matches the files. One line sums up the seed and the counts per strategy; a failing observer's
/// log, change sets and the writers' lines are kept in the temporary folder.
///
/// `FOLIO_GROWTH_SEED` replays the same transactions (not the same interleaving);
/// `FOLIO_GROWTH_STRATEGIES=0,100` runs some strategies only; `FOLIO_GROWTH_COMMITS` is the
/// number of commits per writer (default 100: 300 per strategy whatever the machine's speed).
@Suite struct JournalGrowthObservationTests {
    /// The change sets received, each with the monotonic clock when this process got it.
    final class Announcements: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [(set: ChangeSet, at: UInt64)] = []
        var items: [(set: ChangeSet, at: UInt64)] { lock.withLock { stored } }
        func append(_ set: ChangeSet) {
            let now = DispatchTime.now().uptimeNanoseconds
            lock.withLock { stored.append((set, now)) }
        }
    }

    /// The observer's log (debug included), each line with the monotonic clock.
    final class ObserverLog: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        var lines: [String] { lock.withLock { stored } }
        var handler: LogHandler {
            { message in
                let line = "\(DispatchTime.now().uptimeNanoseconds) \(message.level) \(message.text) [\(message.path ?? "")]"
                self.lock.withLock { self.stored.append(line) }
            }
        }
    }

    /// Where the journal ends, sampled every 2 ms on a thread of its own (the test's tasks may
    /// wait long for the cooperative pool when other suites run) while the writers run; lseek,
    /// not fstat: an fstat would change what the writers' syncs write.
    final class JournalSampler: @unchecked Sendable {
        private let lock = NSLock()
        private var samples = 0, endingInZeros = 0, largest: Int64 = 0, stopped = false
        private let done = DispatchSemaphore(value: 0)

        var counts: (samples: Int, endingInZeros: Int, largest: Int64) { lock.withLock { (samples, endingInZeros, largest) } }

        init(_ path: String) {
            Thread.detachNewThread { [self] in
                defer { done.signal() }
                let fd = open(path, O_RDONLY)
                guard fd >= 0 else { return }
                defer { close(fd) }
                var last = [UInt8](repeating: 0, count: 16)
                while !lock.withLock({ stopped }) {
                    let size = Int64(lseek(fd, 0, SEEK_END))
                    // A journal of its header only ends with four zero bytes (its last field).
                    if size > Int64(Journal.headerSize) + 16,
                        last.withUnsafeMutableBytes({ Platform.readAll(fd, into: $0, at: size - 16) }) == 16
                    {
                        let zeros = last.allSatisfy { $0 == 0 }
                        lock.withLock {
                            samples += 1
                            if zeros { endingInZeros += 1 }
                            largest = max(largest, size)
                        }
                    }
                    usleep(2000)
                }
            }
        }

        /// Stops sampling, and waits for the thread to end (once).
        func stop() {
            let first = lock.withLock {
                defer { stopped = true }
                return !stopped
            }
            if first { done.wait() }
        }
    }

    /// What the writers said they changed: per slot, the changes and when the last one began.
    struct WriterAccount {
        var exists = Set<String>()
        var changes: [String: Int] = [:]
        var lastBegun: [String: UInt64] = [:]
        /// Per slot, its changes: "upsert 12 at NANOS", "delete 14 at NANOS".
        var history: [String: [String]] = [:]
        var commits = 0

        mutating func take(_ lines: [String]) {
            for line in lines where line.hasPrefix("changed ") {
                // changed N begun NANOS up ID,… del ID,…
                let words = line.split(separator: " ").map(String.init)
                guard let begun = words.firstIndex(of: "begun").flatMap({ UInt64(words[$0 + 1]) }),
                    let up = words.firstIndex(of: "up"), let del = words.firstIndex(of: "del")
                else { continue }
                commits += 1
                let upserted = words[(up + 1)..<del].flatMap { $0.split(separator: ",").map(String.init) }
                let deleted = words[(del + 1)...].flatMap { $0.split(separator: ",").map(String.init) }
                for id in upserted { exists.insert(id) }
                for id in deleted { exists.remove(id) }
                for id in upserted + deleted {
                    changes[id, default: 0] += 1
                    lastBegun[id] = begun
                    history[id, default: []].append("\(deleted.contains(id) ? "delete" : "upsert") \(words[1]) at \(begun)")
                }
            }
        }
    }

    /// One strategy's counts, for the summary line.
    struct Outcome {
        var commits = 0, checkpoints = 0, changeSets = 0, entities = 0
        var missed = 0, inconsistent = 0, repeated = 0, finalMatches = false, caughtUpAlone = false
        var samples = 0, endingInZeros = 0, largest: Int64 = 0
        var origins: [ChangeSet.Origin: Int] = [:]
        var seconds = 0.0
    }

    /// The writers: durability, then options. The third is a short-lived process, as a tool is: it
    /// closes the store and opens it again every 10 commits (a checkpoint at each close, and a
    /// process that does not know where the journal ends).
    static let writers = [["full"], ["relaxed"], ["full", "--reopen-every", "10"]]
    /// How the observers start: whether each reads every file when it subscribes, and the share
    /// of all commits acknowledged before it subscribes.
    static let observers: [(reads: Bool, after: Double)] = [(true, 0), (false, 0), (false, 0.5), (false, 0.8), (false, 0.9), (false, 0.95)]

    @Test func noObserverMissesACommitWhateverTheJournalsGrowth() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["FOLIO_GROWTH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        let strategies = environment["FOLIO_GROWTH_STRATEGIES"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? [65536, 0, 100]
        let commits = environment["FOLIO_GROWTH_COMMITS"].flatMap(Int.init) ?? 100
        var summary: [String] = []
        for freeSpace in strategies {
            let outcome = try await run(freeSpace: freeSpace, seed: seed, commitsPerWriter: commits)
            let origins = outcome.origins.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }
            summary.append(
                "free space \(freeSpace): \(outcome.commits) commits, \(outcome.checkpoints) asked checkpoints, "
                    + "\(outcome.changeSets) change sets (\(origins.joined(separator: ", "))), \(outcome.entities) slots, "
                    + "\(outcome.missed) missed, \(outcome.inconsistent) inconsistent, \(outcome.repeated) too often, "
                    + "final state \(outcome.finalMatches ? "matches" : "differs")\(outcome.caughtUpAlone ? "" : " (not caught up by the watcher alone)"), "
                    + "journal ends sampled \(outcome.samples) (\(outcome.endingInZeros) in zeros, largest \(outcome.largest) bytes), "
                    + String(format: "%.1f s", outcome.seconds))
        }
        print("JournalGrowthObservationTests seed \(seed): " + summary.joined(separator: "; "))
    }

    /// An observing store of this process: its change sets and its log, and what it knew when
    /// it subscribed.
    struct Observer {
        let store: Store
        let log: ObserverLog
        let announcements: Announcements
        let listening: Task<Void, Never>
        /// The monotonic clock once it subscribed.
        let subscribed: UInt64
        /// The slots it read when it subscribed (nil: it read nothing).
        let read: Set<String>?

        /// Opens and subscribes (the watcher only, no polling), then reads every file if asked.
        static func open(_ folder: TemporaryFolder, reading: Bool) async throws -> Observer {
            let log = ObserverLog()
            var configuration = Store.Configuration.testing(log: log.handler)
            configuration.outsideChangePollInterval = .seconds(3600)
            let store = try await Store.open(at: folder.url, configuration: configuration)
            let stream = await store.changes()
            let subscribed = DispatchTime.now().uptimeNanoseconds
            let announcements = Announcements()
            let listening = Task { for await set in stream { announcements.append(set) } }
            let read = reading ? Set(try await store.fetch(Query<Slot>()).map(\.id)) : nil
            return Observer(store: store, log: log, announcements: announcements, listening: listening, subscribed: subscribed, read: read)
        }
    }

    /// An observer's change sets replayed from what it knew when it subscribed.
    struct Replay {
        /// What it was told exists, of the slots whose state it knows.
        var exists = Set<String>()
        var known = Set<String>()
        var problems: [String] = []
        var announced: [String: Int] = [:]
        var lastAt: [String: UInt64] = [:]

        init(_ items: [(set: ChangeSet, at: UInt64)], read: Set<String>?) {
            if let read {
                exists = read
                known = Set(read)
            }
            for (set, at) in items where set.collection == Slot.collection {
                for id in set.inserted.union(set.updated).union(set.deleted) {
                    announced[id, default: 0] += 1
                    lastAt[id] = at
                    // The first word of a slot it never read: whatever it says is the state.
                    if known.insert(id).inserted {
                        if set.deleted.contains(id) { exists.remove(id) } else { exists.insert(id) }
                        continue
                    }
                    if set.inserted.contains(id), !exists.insert(id).inserted { problems.append("inserted while it exists: \(id)") }
                    // A file read for the first time announces its entities as updated when the store
                    // cannot tell they are new: that one exists now.
                    if set.updated.contains(id) { exists.insert(id) }
                    if set.deleted.contains(id), exists.remove(id) == nil { problems.append("deleted while it does not exist: \(id)") }
                }
            }
        }
    }

    /// One strategy: the writers, this process observing; checks and returns the counts.
    private func run(freeSpace: Int, seed: UInt64, commitsPerWriter: Int) async throws -> Outcome {
        let started = ContinuousClock.now
        let folder = TemporaryFolder("growth-\(freeSpace)")
        let logs = folder.url.deletingLastPathComponent()
        let context = "free space \(freeSpace), seed \(seed)"
        let environment = ["FOLIO_JOURNAL_FREE_SPACE": "\(freeSpace)"]
        // Every slot exists before the observers subscribe: what an observer that read the files
        // was told of each is known. (In an empty store, an insert announced from a file never
        // read, `updated`, merged with the delete read after it, comes as the delete of a slot
        // never announced.)
        for index in Self.writers.indices {
            let filler = try CrashChild(
                ["write", folder.url.path, "\(seed)", "0", "full", "w\(index)", "--fixed-days", "--fill", "--max-seconds", "120"],
                logs: logs, name: "growth-\(freeSpace)-fill\(index)", environment: environment)
            defer { filler.kill() }
            try #require(await filler.waitForExit(before: .now + .seconds(150)) && filler.exitedCleanly, "\(context): \(filler.errorText)")
            try #require(filler.lines.contains("filled"), "\(context): \(filler.lines)")
        }
        /// The slots in the store's files, as a store that never observed reads them.
        func slotsInFiles() async throws -> Set<String> {
            var readOnly = Store.Configuration.testing()
            readOnly.readOnly = true
            let reader = try await Store.open(at: folder.url, configuration: readOnly)
            let slots = Set(try await reader.fetch(Query<Slot>()).map(\.id))
            try await reader.close()
            return slots
        }
        let initial = try await slotsInFiles()
        try #require(initial.count == Self.writers.count * 41, "\(context): \(initial.count) slots filled")
        var observers: [Observer] = []
        for start in Self.observers where start.after == 0 { observers.append(try await Observer.open(folder, reading: start.reads)) }
        let sampler = JournalSampler(folder.file(".folio/journal").path)
        defer { sampler.stop() }

        var writers: [CrashChild] = []
        for (index, options) in Self.writers.enumerated() {
            writers.append(
                try CrashChild(
                    [
                        "write", folder.url.path, "\(seed &+ UInt64(index))", "\(commitsPerWriter)", options[0], "w\(index)",
                        "--fixed-days", "--print-changes", "--checkpoint-one-in", "40", "--threshold-kib", "96",
                        "--delay-ms", "20", "--idle-ms", "30", "--idle-every", "12", "--max-seconds", "240",
                    ] + options.dropFirst(),
                    logs: logs, name: "growth-\(freeSpace)-w\(index)", environment: environment))
        }
        defer { for writer in writers { writer.kill() } }
        let total = Self.writers.count * commitsPerWriter
        for start in Self.observers where start.after > 0 {
            while writers.map(\.acks.count).reduce(0, +) < Int(Double(total) * start.after), writers.contains(where: \.process.isRunning) {
                try await Task.sleep(for: .milliseconds(5))
            }
            observers.append(try await Observer.open(folder, reading: start.reads))
        }
        for writer in writers {
            let exited = await writer.waitForExit(before: .now + .seconds(300))
            try #require(exited && writer.exitedCleanly, "\(context): a writer did not finish: \(writer.errorText)")
            try #require(writer.acks.count == commitsPerWriter, "\(context): \(writer.acks.count) acknowledged, not \(commitsPerWriter)")
        }
        sampler.stop()
        var account = WriterAccount(exists: initial)
        for writer in writers { account.take(writer.lines) }
        let files = try await slotsInFiles()
        #expect(account.exists == files, "\(context): the writers acknowledged \(account.exists.sorted()), the files hold \(files.sorted())")

        /// What an observer got wrong, as its replay says: the known slots whose state differs
        /// from the files, and the slots that exist, changed since it subscribed, and were not
        /// announced after their last change began.
        func errors(_ observer: Observer, _ replay: Replay) -> (differ: [String], missed: [String]) {
            let differ = replay.known.filter { replay.exists.contains($0) != files.contains($0) }.sorted()
            let missed = account.lastBegun.filter { id, begun in
                files.contains(id) && begun > observer.subscribed && (replay.lastAt[id] ?? 0) <= begun
            }.keys.sorted()
            return (differ, missed)
        }
        /// What the writers did to a slot and what an observer was told of it, for a message.
        func story(_ id: String, _ items: [(set: ChangeSet, at: UInt64)]) -> String {
            let told = items.filter { $0.set.collection == Slot.collection }.compactMap { set, at -> String? in
                if set.inserted.contains(id) { return "inserted at \(at)" }
                if set.updated.contains(id) { return "updated at \(at)" }
                return set.deleted.contains(id) ? "deleted at \(at)" : nil
            }
            return "\(id): written \(account.history[id] ?? []), announced \(told)"
        }
        func caughtUp(_ observer: Observer) -> Bool {
            let result = errors(observer, Replay(observer.announcements.items, read: observer.read))
            return result.differ.isEmpty && result.missed.isEmpty
        }
        // The watcher alone must bring everything in (15 s at most); a read afterwards only tells
        // a late watcher from a commit never announced.
        var caughtUpAlone = false
        for _ in 0..<300 {
            caughtUpAlone = observers.allSatisfy(caughtUp)
            if caughtUpAlone { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let byWatcher = observers.map { errors($0, Replay($0.announcements.items, read: $0.read)) }
        if !caughtUpAlone {
            for observer in observers { _ = try await observer.store.fetch(Query<Slot>()) }
            for _ in 0..<100 where !observers.allSatisfy(caughtUp) { try await Task.sleep(for: .milliseconds(50)) }
        }
        for observer in observers {
            try await observer.store.close()
            observer.listening.cancel()
        }

        let sampled = sampler.counts
        var outcome = Outcome(
            commits: account.commits, checkpoints: writers.map { $0.lines.filter { $0 == "checkpointed" }.count }.reduce(0, +),
            entities: account.changes.count, finalMatches: true, caughtUpAlone: caughtUpAlone,
            samples: sampled.samples, endingInZeros: sampled.endingInZeros, largest: sampled.largest)
        for (number, observer) in observers.enumerated() {
            let items = observer.announcements.items
            let replay = Replay(items, read: observer.read)
            let (differ, missed) = errors(observer, replay)
            let repeated = replay.announced.filter { id, count in
                count > account.changes[id, default: 0] + (observer.read == nil ? 1 : 0)
            }.keys.sorted()
            outcome.changeSets += items.count
            outcome.missed += missed.count
            outcome.inconsistent += replay.problems.count
            outcome.repeated += repeated.count
            outcome.finalMatches = outcome.finalMatches && differ.isEmpty
            for (set, _) in items { outcome.origins[set.origin, default: 0] += 1 }
            let name = "\(context), observer \(number) (\(observer.read == nil ? "read nothing" : "read every file"))"
            let watched = byWatcher[number]
            #expect(watched.differ.isEmpty, "\(name): 15 s after the writers, told otherwise than the files hold: \(watched.differ.map { story($0, items) })")
            // A file first loaded for an earlier record of a batch this observer read may already
            // hold the batch's later records (another process checkpointed them meanwhile): they
            // once looked like no change and were never announced (found by this test).
            #expect(
                watched.missed.isEmpty,
                "\(name): 15 s after the writers, never announced after their last change: \(watched.missed.map { story($0, items) }); after a read: \(missed.isEmpty ? "all there" : "still missing")"
            )
            #expect(missed.isEmpty, "\(name): changed and not announced after their last change: \(missed.map { story($0, items) })")
            #expect(differ.isEmpty, "\(name): told otherwise than the files hold: \(differ.map { story($0, items) })")
            let troubled = Set(replay.problems.compactMap { $0.split(separator: " ").last.map(String.init) }).sorted()
            #expect(replay.problems.isEmpty, "\(name): \(replay.problems); \(troubled.map { story($0, items) })")
            #expect(repeated.isEmpty, "\(name): announced more often than changed: \(repeated.map { story($0, items) })")
            // A file read while another process's checkpoint replaced it is an older revision
            // Folio's state includes: what it changes is that process's, not a person's (it was
            // once told as an outside edit; found by this test).
            let misattributed = items.filter { $0.set.origin != .otherProcess }.map(\.set)
            #expect(misattributed.isEmpty, "\(name): \(misattributed)")
            let right =
                watched.differ.isEmpty && watched.missed.isEmpty && missed.isEmpty && differ.isEmpty && replay.problems.isEmpty && repeated.isEmpty
                && !items.contains { $0.set.origin != .otherProcess }
            if !right {
                // What a failure needs, kept: the observer's log, its change sets, the writers' lines.
                let kept = FileManager.default.temporaryDirectory.appendingPathComponent("folio-growth-\(seed)-\(freeSpace)-\(number).log")
                let text =
                    ["subscribed \(observer.subscribed)"] + observer.log.lines.map { "log " + $0 } + items.map { "set \($0.at) \($0.set)" }
                    + writers.enumerated().flatMap { index, writer in writer.lines.map { "w\(index) " + $0 } }
                try? text.joined(separator: "\n").write(to: kept, atomically: true, encoding: .utf8)
                Issue.record("\(name): its log, its change sets and the writers' lines are in \(kept.path)")
            }
        }
        let elapsed = ContinuousClock.now - started
        outcome.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(outcome.commits == total, "\(context): \(outcome.commits) changed lines")
        // The strategy took effect: plain appends leave no zeros after the last record (its JSON
        // ends in `}`); free space does.
        #expect(sampled.samples > 0, "\(context): the journal was never sampled")
        if freeSpace == 0 {
            #expect(sampled.endingInZeros == 0, "\(context): \(sampled.endingInZeros) of \(sampled.samples) samples end in zeros")
        } else {
            #expect(sampled.endingInZeros > 0, "\(context): no sample of \(sampled.samples) ends in zeros")
        }
        return outcome
    }
}
