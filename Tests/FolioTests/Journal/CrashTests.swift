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
// `folio-crash-child`, Tests/CrashChild/main.swift), so a SIGKILL really cuts a write, a sync or a
// checkpoint at a random instant, and two writers really are two processes sharing a flock.
// This file also holds what TwoProcessTests, LiveCopyTests and OutboxProcessTests share: the
// child's entity, the invariant check of a store, and the child process handle. The outbox half of
// the check (for stores written with `--outbox`) is OutboxCheck, in OutboxProcessTests.swift.

/// The checks a store written by children must pass, whatever instant they were killed at.
enum StoreCheck {
    /// Opens the store (so recovery runs), checks every invariant, closes it.
    /// - Parameter acked: For each writer, the highest transaction it acknowledged: the store must
    ///   hold it (or a later one).
    /// - Returns: The violations found (empty if none), and each writer's last transaction.
    static func run(_ folder: URL, acked: [String: Int]) async -> (violations: [String], last: [String: Int]) {
        let store: Store
        do { store = try await Store.open(at: folder) } catch { return (["the store does not open: \(error)"], [:]) }
        var result = await check(store, folder, acked: acked)
        do { try await store.close() } catch { result.violations.append("close failed: \(error)") }
        return result
    }

    private static func check(_ store: Store, _ folder: URL, acked: [String: Int]) async -> (violations: [String], last: [String: Int]) {
        var problems: [String] = []
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: folder.path + "/.folio/tmp")) ?? []
        if !leftovers.isEmpty { problems.append(".folio/tmp is not empty after open: \(leftovers.sorted())") }
        // After open, recovery has checkpointed: the files alone hold the whole state.
        let files = parseFiles(folder, problems: &problems)
        let slots: [Slot], pushed: [PushedSlot]
        do {
            slots = try await store.fetch(Query<Slot>(.all))
            pushed = try await store.fetch(Query<PushedSlot>(.all))
        } catch { return (problems + ["fetch failed: \(error)"], [:]) }
        var last: [String: Int] = [:]
        // The two collections are checked alike, each with its own ledgers (a folder uses one).
        for (collection, group) in [("slots", slots), ("pushed", pushed.map(\.asSlot))] {
            let fetched = Dictionary(group.map { ($0.id, $0.transaction) }, uniquingKeysWith: max)
            let inFiles = files[collection, default: [:]]
            if fetched != inFiles { problems.append("\(collection): fetch and files disagree: fetch \(fetched.count) ids, files \(inFiles.count) ids") }
            problems += groupViolations(in: group)
            for slot in group where slot.id == Slot.ledgerID(slot.writer) { last[slot.writer] = max(last[slot.writer, default: 0], slot.transaction) }
        }
        for (writer, transaction) in acked where last[writer, default: 0] < transaction {
            problems.append("writer \(writer) acknowledged transaction \(transaction), the store ends at \(last[writer, default: 0])")
        }
        problems += await OutboxCheck.violations(store, folder, pushed: pushed)
        return (problems, last)
    }

    /// Parses every `.json` file with JSONSerialization (independently of Folio's parser) and
    /// checks that each slot is in exactly one day file of its collection, the one of its `day`.
    /// - Returns: collection (`slots`, `pushed`) → id → transaction, as the files hold them.
    static func parseFiles(_ folder: URL, problems: inout [String]) -> [String: [String: Int]] {
        var found: [String: [String: Int]] = [:]
        var places: [String: [String]] = [:]
        for path in files(under: folder) where path.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: folder.path + "/" + path),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                problems.append("\(path) is not a JSON object")
                continue
            }
            let collection = String(path.prefix { $0 != "/" })
            guard collection == "slots" || collection == "pushed" else { continue }
            guard let entities = object["entities"] as? [String: [String: Any]] else {
                problems.append("\(path) has no \"entities\" object")
                continue
            }
            for (id, entity) in entities {
                places[collection + "/" + id, default: []].append(path)
                found[collection, default: [:]][id] = entity["transaction"] as? Int ?? -1
                if let day = entity["day"] as? String, path != "\(collection)/\(day.prefix(7))/\(day).json" {
                    problems.append("\(id) with day \(day) is in \(path)")
                }
            }
        }
        for (id, paths) in places where paths.count != 1 { problems.append("\(id) is in \(paths.count) files: \(paths.sorted())") }
        return found
    }
}

extension StoreCheck {
    /// Every file below `folder`, relative paths, sorted (the machinery folder included).
    static func files(under folder: URL) -> [String] {
        let root = folder.standardizedFileURL.path
        var files: [String] = []
        var isDirectory: ObjCBool = false
        for path in FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        where FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue {
            files.append(path)
        }
        return files.sorted()
    }
}

/// A running `folio-crash-child`. Its output goes to files, not pipes: a pipe nobody drains
/// would block it, and a file keeps every line written before a kill.
final class CrashChild {
    let process = Process()
    let output: URL
    let errors: URL

    /// - Parameter environment: Variables added to the test's own for the child.
    init(_ arguments: [String], logs: URL, name: String, executable: String = "folio-crash-child",
         environment: [String: String] = [:]) throws {
        output = logs.appendingPathComponent("\(name).out")
        errors = logs.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let out = try FileHandle(forWritingTo: output), err = try FileHandle(forWritingTo: errors)
        defer { try? out.close(); try? err.close() }
        process.executableURL = try Self.executable(executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    /// The executable, in the build products folder: next to the test binary (Linux), or next to
    /// the `.xctest` bundle (macOS, where the bundle is loaded by a helper tool).
    static func executable(_ name: String = "folio-crash-child") throws -> URL {
        let bases = [URL(fileURLWithPath: CommandLine.arguments[0]), Bundle(for: CrashChild.self).bundleURL, Bundle.main.bundleURL]
        var folders: [URL] = []
        for base in bases {
            var folder = base.deletingLastPathComponent()
            for _ in 0..<3 {
                folders.append(folder)
                folder = folder.deletingLastPathComponent()
            }
        }
        if let found = folders.first(where: { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent(name).path) }) {
            return found.appendingPathComponent(name)
        }
        throw ChildNotBuilt(name: name, searched: folders.map(\.path))
    }

    struct ChildNotBuilt: Error, CustomStringConvertible {
        var name: String
        var searched: [String]
        var description: String {
            "\(name) is not built (run `swift build`; looked in \(searched)); the process tests need it"
        }
    }

    /// SIGKILL now, and reap.
    func kill() {
        if process.isRunning { sendKill(process.processIdentifier) }
        process.waitUntilExit()
    }

    /// Waits for the child to exit by itself; false if `deadline` passes first.
    func waitForExit(before deadline: ContinuousClock.Instant) async -> Bool {
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        return true
    }

    /// Waits until the child has opened the store and committed once (a writer). A minute at
    /// most: on a loaded machine starting a child and its first durable commit take seconds.
    func waitForFirstAck(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while acks.isEmpty {
            try #require(process.isRunning, "the writer stopped: \(errorText)", sourceLocation: sourceLocation)
            try #require(ContinuousClock.now < deadline, "the writer acknowledged nothing in 60 s", sourceLocation: sourceLocation)
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Complete lines of output (a line cut by a kill has no newline and is left out).
    var lines: [String] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    var acks: [Int] { lines.compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil } }
    var errorText: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }
    var exitedCleanly: Bool { process.terminationReason == .exit && process.terminationStatus == 0 }
}

/// SIGKILL (a free function: inside `CrashChild`, `kill` names the method).
func sendKill(_ pid: Int32) { _ = kill(pid, SIGKILL) }

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
                ["write", folder.path, durability == "full" ? "1" : "2", "1000000", durability, durability,
                 "--delay-ms", "20", "--threshold-kib", "64", "--idle-ms", "25", "--idle-every", "8"] + (outbox ? ["--outbox"] : []),
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
