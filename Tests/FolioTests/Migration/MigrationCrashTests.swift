@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// `folio migrate` on a 10-year store (3,650 day files, a renamed collection, pending commands)
/// SIGKILLed at random instants; after each kill, opening the store must give entirely the old
/// store or entirely the new one: every data file, the outbox's commands and `folio.json` agree.
@Suite(.serialized) struct MigrationCrashTests {
    static let days = 3650
    static let forward = """
        {"renameField": "title", "to": "text", "in": "entries"},
        {"setDefault": "weather", "value": "unknown", "in": "entries"},
        {"convertField": "mood", "to": "number", "in": "entries"},
        {"renameCollection": "tags", "to": "labels"}
        """
    static let backward = """
        {"renameField": "text", "to": "title", "in": "entries"},
        {"removeField": "weather", "in": "entries"},
        {"convertField": "mood", "to": "string", "in": "entries"},
        {"renameCollection": "labels", "to": "tags"}
        """

    /// The plan of the first `count` migrations: odd ones go to the new shape, even ones back, so
    /// the store never needs copying again between kills.
    static func plan(_ count: Int) -> String {
        let migrations = (1...count).map { "{\"name\": \"\($0)\", \"steps\": [\($0 % 2 == 1 ? forward : backward)]}" }
        return "{\"migrations\": [" + migrations.joined(separator: ",") + "]}"
    }

    /// Writes the old store directly in FORMAT.md's shape (fast: no fsync per file).
    static func writeFixture(_ folder: TemporaryFolder) throws {
        try folder.write("{\n  \"format\": 1,\n  \"store\": \"STORE\"\n}\n", to: "folio.json")
        var day = Date(timeIntervalSince1970: 1_451_606_400)   // 2016-01-01
        var style = Date.ISO8601FormatStyle(timeZone: .gmt)
        style = style.year().month().day()
        var months = Set<String>()
        for index in 0..<days {
            let key = day.formatted(style)
            let month = String(key.prefix(7))
            if months.insert(month).inserted {
                try FileManager.default.createDirectory(at: folder.file("entries/\(month)"), withIntermediateDirectories: true)
            }
            let entities = (0..<2).map { j in
                "    \"E\(index)-\(j)\": {\"date\": \"\(key)\", \"id\": \"E\(index)-\(j)\", \"mood\": \"\(j + 1)\", \"title\": \"day \(index) entry \(j)\"}"
            }
            try folder.writeQuickly("{\n  \"entities\": {\n" + entities.joined(separator: ",\n") + "\n  }\n}\n", to: "entries/\(month)/\(key).json")
            day += 86_400
        }
        try folder.write("{\"entities\": {\"T1\": {\"id\": \"T1\", \"name\": \"home\"}}}\n", to: "tags.json")
        for sequence in 1...2 {
            let name = String(format: "%020d", sequence)
            try folder.write(
                """
                {"baseVersion": null, "collection": "entries", "entity": {"date": "2016-01-01", "id": "E0-\(sequence - 1)", "mood": "1", "title": "edited"},
                 "entityID": "E0-\(sequence - 1)", "id": "STORE-\(name)", "operation": "upsert", "partition": "2016-01-01",
                 "sequence": \(sequence), "timestamp": "2026-11-22T09:30:00.000Z"}
                """, to: "outbox/\(name).json")
        }
    }

    enum Shape: Equatable { case old, new, mixed(String) }

    /// The model of both stores, checked file by file.
    static func shape(of folder: TemporaryFolder) throws -> (shape: Shape, applied: Int) {
        let migrations = try StoreFiles.migrations(folder)
        let expectNew = migrations.count % 2 == 1
        guard migrations == (0..<migrations.count).map({ String($0 + 1) }) else { return (.mixed("folio.json records \(migrations)"), 0) }
        func mixed(_ why: String) -> (shape: Shape, applied: Int) { (.mixed(why), migrations.count) }
        if folder.exists(".folio/migration") { return mixed("the staging folder survived an open") }
        guard folder.exists(expectNew ? "labels.json" : "tags.json"), !folder.exists(expectNew ? "tags.json" : "labels.json") else {
            return mixed("tags.json / labels.json")
        }
        func entityIsNew(_ json: [String: Any]) -> Bool? {
            if json["text"] is String, json["title"] == nil, json["mood"] is Int, json["weather"] as? String == "unknown" { return true }
            if json["title"] is String, json["text"] == nil, json["mood"] is String, json["weather"] == nil { return false }
            // (The setDefault step of the way forward fills `weather`; the way back removes it.)
            return nil
        }
        let entries = try StoreFiles.entities(folder, "entries")
        guard entries.count == 2 * days else { return mixed("\(entries.count) entries") }
        for (id, entry) in entries where entityIsNew(entry.json) != expectNew { return mixed("\(entry.path): \(id)") }
        for sequence in 1...2 {
            let command = try JSONSerialization.jsonObject(with: folder.bytes("outbox/" + String(format: "%020d", sequence) + ".json")) as! [String: Any]
            if entityIsNew(command["entity"] as! [String: Any]) != expectNew { return mixed("command \(sequence)") }
        }
        return (expectNew ? .new : .old, migrations.count)
    }

    /// Starts `folio migrate`; returns it running.
    static func startMigration(_ folder: TemporaryFolder, plan: URL) throws -> Process {
        let process = Process()
        process.executableURL = try CrashChild.executable("folio")
        process.arguments = ["migrate", "--plan", plan.path, folder.url.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Waits for a migration child on a thread of its own and kills it when its progress says
    /// (FORMAT.md's migration steps: staged files, then the commit file): mode 0 at `killAt`
    /// seconds, mode 1 a little after it starts staging, mode 2 between its commit and its end.
    /// - Returns: When it ended or was killed (seconds after the call), whether it was killed while
    ///   running, and when its commit file appeared.
    static func watch(
        _ child: Process, folder: TemporaryFolder, mode: Int, fraction: Double, killAt: Double?,
        commit: Double, end: Double
    ) async -> (delay: Double, killed: Bool, commit: Double?) {
        let root = folder.url
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                let launched = ContinuousClock.now
                func seconds() -> Double {
                    let elapsed = ContinuousClock.now - launched
                    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                }
                func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path) }
                var killAt = killAt
                var seenCommit: Double?
                while child.isRunning && seconds() < 120 {
                    if seenCommit == nil && exists(".folio/migration/commit.json") { seenCommit = seconds() }
                    if killAt == nil {
                        if mode == 1 && exists(".folio/migration/staged") { killAt = seconds() + fraction * max(0.01, commit * 0.2) }
                        if mode == 2 && seenCommit != nil { killAt = seconds() + fraction * max(0.01, end - commit) }
                    }
                    if let killAt, seconds() >= killAt { break }
                    usleep(1000)
                }
                let killed = child.isRunning
                sendKill(child.processIdentifier)
                continuation.resume(returning: (seconds(), killed, seenCommit))
            }
            thread.start()
        }
    }

    @Test func killedMigrationsLeaveTheOldStoreOrTheNew() async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        // A kill -9 is about processes, not disks: on tmpfs when there is one, the test spends
        // its time killing rather than creating inodes (the durability of each step against power
        // loss is the fsync/syncfs order, reviewed in MigrationCommit).
        let folder = TemporaryFolder(onMemoryFileSystem: true)
        try Self.writeFixture(folder)
        #expect(try Self.shape(of: folder).shape == .old)
        let planFile = folder.url.deletingLastPathComponent().appendingPathComponent("plan.json")

        // One run to the end: the new store, and when a migration commits and ends here.
        try Data(Self.plan(1).utf8).write(to: planFile)
        let started = ContinuousClock.now
        var committedAt: Duration?
        let full = try Self.startMigration(folder, plan: planFile)
        while full.isRunning && ContinuousClock.now - started < .seconds(120) {
            if committedAt == nil && folder.exists(".folio/migration/commit.json") { committedAt = ContinuousClock.now - started }
            try await Task.sleep(for: .milliseconds(5))
        }
        let duration = ContinuousClock.now - started
        #expect(!full.isRunning && full.terminationStatus == 0)
        #expect(try Self.shape(of: folder) == (.new, 1))
        var end = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        var commit = committedAt.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } ?? end / 2

        var kills = 0, mixed = 0, old = 0, new = 0, applied = 1
        // Bounded in count: 35 s of kills, and past that, on a loaded machine, more runs until the
        // 3 kills it checks (a fixed minimum of work, never shrunk to fit the clock; at most 40
        // runs). Past the 35 s each kill comes before the commit instant, so that a child that
        // outruns its kill (a phase stretched by the load) does not count against the minimum.
        let budget = ContinuousClock.now + .seconds(35)
        var runs = 0
        while kills < 30 && (ContinuousClock.now < budget || (kills < 3 && runs < 40)) {
            runs += 1
            let extended = ContinuousClock.now >= budget
            try Data(Self.plan(applied + 1).utf8).write(to: planFile)
            let child = try Self.startMigration(folder, plan: planFile)
            // Kills follow the child's progress, not only the clock (a loaded machine stretches
            // every phase): a third at a random instant, a third while it stages files, a third
            // between its commit and its end.
            let mode = extended ? 0 : Int.random(in: 0..<3, using: &random)
            let fraction = Double.random(in: 0...1, using: &random)
            let killAt: Double? = mode == 0 ? fraction * (extended ? commit : end) : nil
            // Watched on a thread of its own: on a loaded machine the test's tasks may wait
            // seconds for a turn (the suite runs many at once), and a child that finished while
            // its watcher waited is a kill that never happened.
            let watched = await Self.watch(child, folder: folder, mode: mode, fraction: fraction, killAt: killAt, commit: commit, end: end)
            if let seen = watched.commit { commit = seen }
            let delay = watched.delay
            child.waitUntilExit()
            if watched.killed { kills += 1 } else if child.terminationStatus == 0 { end = delay }
            // Any open finishes a committed migration or discards an uncommitted one.
            try await Store.open(at: folder.url, configuration: .testing()).close()
            let (shape, now) = try Self.shape(of: folder)
            switch shape {
            case .mixed(let why):
                mixed += 1
                Issue.record("seed \(seed): a kill after \(Int(delay * 1000)) ms left a mixed store: \(why)")
                break
            case _ where now == applied: old += 1
            case _ where now == applied + 1: new += 1
            default: Issue.record("seed \(seed): \(now) migrations applied, expected \(applied) or \(applied + 1)")
            }
            if case .mixed = shape { break }
            applied = now
        }
        print(
            "migration crash test: \(kills) kills, \(mixed) mixed stores (seed \(seed); \(old) old, \(new) new; \(2 * Self.days) entities in \(Self.days) day files; a migration committed at \(Int(commit * 1000)) ms and ended at \(Int(end * 1000)) ms)"
        )
        #expect(kills >= 3 && mixed == 0)
    }
}
