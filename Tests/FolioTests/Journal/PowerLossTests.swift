@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// Power cuts at every disk-changing step of a workload, under the strict POSIX model of
/// ``PowerCutDisk``: each state a cut may leave is built as a folder, opened, and checked against
/// what was acknowledged before the cut.
///
/// What must hold in every state (the promises of no loss and of exactly once):
/// - the store opens;
/// - it holds exactly the state after the acknowledged transactions, or after one more (the one
///   in flight): every acknowledged transaction whole, change and command together;
/// - the next command gets a number above every command number ever acknowledged (a repeated
///   number would reuse an idempotency key the server has already seen, and be dropped).
@Suite struct PowerLossTests {
    /// What a reader sees: the entities and the outbox queue.
    struct Logical: Equatable, CustomStringConvertible {
        var todos: [String: String]
        var tags: [String: String]
        var commands: [String]
        var failed: [String] = []
        var description: String {
            "todos \(todos.sorted { $0.key < $1.key }), tags \(tags.sorted { $0.key < $1.key }), commands \(commands), failed \(failed)"
        }
    }

    struct CrashPoint {
        var disk: PowerCutDisk
        var acknowledged: Int
        var step: IOStep
    }

    /// Feeds every I/O step to the disk model and notes, at each disk-changing one, the state a
    /// power cut just before it would leave.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var disk: PowerCutDisk
        private(set) var points: [CrashPoint] = []
        var acknowledged = 0

        init(root: String) { disk = PowerCutDisk(root: root) }

        func acknowledge() { lock.withLock { acknowledged += 1 } }

        var hook: IOHook {
            { step throws(FolioError) in
                self.lock.withLock {
                    self.disk.finish()
                    if case .read = step { return }
                    self.points.append(CrashPoint(disk: self.disk, acknowledged: self.acknowledged, step: step))
                    self.disk.step(step)
                }
            }
        }

        /// The state after the last step.
        func finish() -> CrashPoint {
            lock.withLock {
                disk.finish()
                return CrashPoint(disk: disk, acknowledged: acknowledged, step: .read("end"))
            }
        }
    }

    static func logical(_ store: Store) async throws -> Logical {
        let todos = try await store.fetch(Query<Todo>())
        let tags = try await store.fetch(Query<Tag>())
        return Logical(
            todos: Dictionary(uniqueKeysWithValues: todos.map { ($0.id.uuidString, "\($0.title)@\($0.date)") }),
            tags: Dictionary(uniqueKeysWithValues: tags.map { ($0.id, $0.name) }),
            commands: try await store.pendingCommands().map { "\($0.sequence) \($0.operation) \($0.entityID ?? "")" },
            failed: try await store.failedCommands().map { "\($0.command.sequence) \($0.command.operation) \($0.command.entityID ?? "")" })
    }

    static func sequences(_ state: Logical) -> [UInt64] {
        state.commands.compactMap { UInt64($0.split(separator: " ")[0]) }
    }

    /// Runs the workload on a store in `folder`, recording; returns the state after each
    /// acknowledged transaction (index 0: before any) and the largest command number seen by then.
    static func runWorkload(in folder: URL, recorder: Recorder) async throws -> [(state: Logical, maxSequence: UInt64)] {
        var model = Logical(todos: [:], tags: [:], commands: [])
        var states: [(state: Logical, maxSequence: UInt64)] = [(model, 0)]
        let configuration = Store.Configuration.testing(hook: recorder.hook)
        var store = try await Store.open(at: folder, configuration: configuration)

        func committed(_ expected: (inout Logical) -> Void) async throws {
            recorder.acknowledge()
            expected(&model)
            let seen = try await logical(store)
            // The entities follow a model written from the API's meaning, not from Folio's code.
            #expect(seen.todos == model.todos && seen.tags == model.tags, "workload itself is wrong: \(seen)")
            model.commands = seen.commands
            model.failed = seen.failed
            let highest = max(states.last!.maxSequence, sequences(seen).max() ?? 0)
            states.append((seen, highest))
        }

        let milk = todo("Milk", on: "2026-11-20")
        let bread = todo("Bread", on: "2026-11-20")
        let eggs = todo("Eggs", on: "2026-11-21")
        try await store.write { tx in
            for item in [milk, bread, eggs] { try tx.upsert(item) }
            try tx.upsert(Tag(id: "home", name: "Home", color: "#00AA00"))
        }
        try await committed { model in
            for item in [milk, bread, eggs] { model.todos[item.id.uuidString] = "\(item.title)@\(item.date)" }
            model.tags["home"] = "Home"
        }
        var moved = bread
        moved.date = "2026-12-24"
        moved.title = "Bread (moved)"
        try await store.write { [moved] tx in
            try tx.upsert(moved)
            try tx.delete(Tag.self, id: "home")
            try tx.upsert(Tag(id: "work", name: "Work", color: "#FF0000"))
        }
        try await committed { model in
            model.todos[bread.id.uuidString] = "Bread (moved)@2026-12-24"
            model.tags["home"] = nil
            model.tags["work"] = "Work"
        }
        let first = try #require(try await store.pendingCommands().first)
        try await store.acknowledgeCommand(first.sequence, serverVersion: "v1")
        try await committed { _ in }
        try await store.checkpoint()
        // A command moved to failed/ and back: its bytes are in its files only (the journal
        // says "fail", "retry"), so each move must keep a durable copy at every instant.
        let doomed = try #require(try await store.pendingCommands().first)
        try await store.failCommand(doomed.sequence, reason: FailureReason("rejected (test)", status: 422))
        try await committed { _ in }
        try await store.checkpoint()
        try await store.retryFailedCommand(doomed.sequence)
        try await committed { _ in }
        try await store.checkpoint()
        try await store.write { tx in
            try tx.delete(Todo.self, id: eggs.id)
            try tx.upsert(Tag(id: "café", name: "Café", color: "#123456"))
        }
        try await committed { model in
            model.todos[eggs.id.uuidString] = nil
            model.tags["café"] = "Café"
        }
        let second = try #require(try await store.pendingCommands().first)
        try await store.acknowledgeCommand(second.sequence, serverVersion: "v2")
        try await committed { _ in }
        try await store.close()

        store = try await Store.open(at: folder, configuration: configuration)
        try await store.write { tx in try tx.upsert(Tag(id: "late", name: "Late", color: "#000000")) }
        try await committed { model in model.tags["late"] = "Late" }
        try await store.close()
        return states
    }

    @Test func everyStateAPowerCutCanLeaveKeepsWhatWasAcknowledged() async throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_POWER_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory
        let scratch = base.appendingPathComponent("folio-power-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let folder = scratch.appendingPathComponent("recorded")
        let recorder = Recorder(root: folder.standardizedFileURL.path)
        let states = try await Self.runWorkload(in: folder, recorder: recorder)
        let points = recorder.points + [recorder.finish()]

        var count = 0
        var violations: [String] = []
        // Every step with the two extremes (everything unsynced lost, everything kept), then
        // random mixes (single changes lost, kept or torn) while the time budget lasts: a loaded
        // machine checks fewer mixes, never fewer steps.
        let plans = points.map { $0.disk.outcomes(limit: 10, random: &random) }
        let started = ContinuousClock.now
        for round in 0..<10 {
            if round >= 2 && ContinuousClock.now - started > .seconds(25) { break }
            for (index, point) in points.enumerated() where round < plans[index].count {
                let outcome = plans[index][round]
                count += 1
                let place = scratch.appendingPathComponent("state-\(count)")
                try point.disk.materialize(outcome, into: place.path)
                let context = "power cut before step \(index) (\(point.step)), \(outcome.label), \(point.acknowledged) acknowledged"
                if let problem = await check(place, acknowledged: point.acknowledged, states: states) {
                    violations.append("\(context): \(problem)")
                }
                try? FileManager.default.removeItem(at: place)
            }
        }
        if ProcessInfo.processInfo.environment["FOLIO_POWER_STEPS"] != nil {
            for (index, point) in points.enumerated() { print("step \(index): \(point.step)") }
        }
        print("power-loss test: \(count) states, \(violations.count) violations (seed \(seed), \(points.count) steps)")
        for violation in violations.prefix(10) { Issue.record("\(violation.prefix(1500))") }
        #expect(violations.isEmpty, "\(violations.count) violations (seed \(seed))")
        #expect(points.count > 60, "the workload takes many steps: \(points.count)")
    }

    /// A power cut leaves the folder where it was: its `.folio/lock` keeps its inode, so the store
    /// is no copy. The state is rebuilt in a new folder, whose lock is a new file: the log of
    /// written files is made to name it, as the real folder's names its own lock.
    static func keepIdentity(_ folder: URL) throws {
        let fileSystem = FileSystem(root: folder.path)
        guard let (bytes, _) = try fileSystem.read(WrittenLog.path), let newline = bytes.firstIndex(of: 0x0A),
            let lock = try fileSystem.identity(StoreLayout.lockFile)
        else { return }
        var fields = String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ").map(String.init)
        guard fields.count == 9 else { return }
        fields[3] = String(lock.device)
        fields[4] = String(lock.inode)
        let rewritten = Array((fields.joined(separator: " ")).utf8) + bytes[newline...]
        try Data(rewritten).write(to: folder.appendingPathComponent(WrittenLog.path))
    }

    /// Opens one state and returns what is wrong with it, or nil.
    func check(_ folder: URL, acknowledged: Int, states: [(state: Logical, maxSequence: UInt64)]) async -> String? {
        do {
            try Self.keepIdentity(folder)
            let store = try await Store.open(at: folder, configuration: .testing())
            let seen = try await Self.logical(store)
            let allowed = states[acknowledged...].prefix(2)
            guard let match = allowed.first(where: { $0.state == seen }) else {
                try await store.close()
                return "found \(seen); expected \(allowed.map(\.state.description).joined(separator: " or "))"
            }
            try await store.write { tx in try tx.upsert(Tag(id: "probe", name: "Probe", color: "#FFFFFF")) }
            let next = try await store.pendingCommands().last.map(\.sequence) ?? 0
            try await store.close()
            if next <= match.maxSequence { return "the next command got number \(next), already acknowledged (highest \(match.maxSequence))" }
            return nil
        } catch {
            return "\(error)"
        }
    }
}
