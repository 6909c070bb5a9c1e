@testable import Folio
import Foundation
import Testing

/// Fails, or stops as a crash would, at every single disk-changing step of a multi-file
/// transaction and its checkpoint, and checks that the store reopens exactly as before or
/// exactly as after, with nothing left behind.
@Suite struct FaultInjectionTests {
    struct Snapshot: Equatable {
        var todos: [Todo]
        var tags: [Tag]
        /// The outbox, as "sequence operation entity".
        var commands: [String]
    }

    static let keep = todo("Keep", on: "2026-11-20")
    static let edit = todo("Edit me", on: "2026-11-20")
    static let move = todo("Move me", on: "2026-11-21")
    static let home = Tag(id: "home", name: "Home", color: "#00AA00")

    /// A store with three files: two days and the tags.
    func makeInitialStore(in folder: TemporaryFolder) async throws {
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in
            for todo in [Self.keep, Self.edit, Self.move] { try tx.upsert(todo) }
            try tx.upsert(Self.home)
        }
        try await store.close()
    }

    /// Touches four files: edits one day, moves an entity to a new day, deletes and adds a tag.
    func transaction(_ tx: Transaction) throws {
        var edited = Self.edit
        edited.title = "Edited"
        try tx.upsert(edited)
        var moved = Self.move
        moved.date = "2026-12-24"
        try tx.upsert(moved)
        try tx.delete(Tag.self, id: "home")
        try tx.upsert(Tag(id: "work", name: "Work", color: "#FF0000"))
    }

    func snapshot(of folder: TemporaryFolder) async throws -> Snapshot {
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let result = Snapshot(
            todos: try await store.fetch(Query<Todo>(sortedBy: [SortDescriptor(\.title)])),
            tags: try await store.fetch(Query<Tag>()),
            commands: try await store.pendingCommands().map { "\($0.sequence) \($0.operation) \($0.entityID ?? "")" })
        try await store.close()
        // The outbox folder holds exactly the pending commands.
        let files = folder.allFiles().filter { $0.hasPrefix("outbox/") }
        #expect(files.map { Int($0.dropFirst(7).dropLast(5)) ?? -1 } == result.commands.map { Int($0.split(separator: " ")[0])! })
        return result
    }

    /// Runs the transaction, a checkpoint and a close with the plan's fault; returns whether
    /// `write` reported success.
    func run(in folder: TemporaryFolder, plan: FaultPlan) async throws -> Bool {
        let store = try await Store.open(at: folder.url, configuration: .testing(hook: plan.hook))
        var acknowledged = false
        do {
            try await store.write { tx in try transaction(tx) }
            acknowledged = true
            try await store.checkpoint()
        } catch {}
        do { try await store.close() } catch {}
        return acknowledged
    }

    func expected() async throws -> (before: Snapshot, after: Snapshot, steps: Int) {
        let folder = TemporaryFolder()
        try await makeInitialStore(in: folder)
        let before = try await snapshot(of: folder)
        let plan = FaultPlan(failAt: nil)
        #expect(try await run(in: folder, plan: plan))
        return (before, try await snapshot(of: folder), plan.stepCount)
    }

    @Test(arguments: [FaultPlan.Mode.fail, .crash])
    func everyStepOfAMultiFileTransaction(mode: FaultPlan.Mode) async throws {
        let (before, after, steps) = try await expected()
        #expect(before.todos != after.todos && before.tags != after.tags && before.commands != after.commands)
        #expect(steps >= 12, "the transaction and its checkpoint take many steps: \(steps)")
        var outcomes: [String] = []
        for step in 0..<steps {
            let folder = TemporaryFolder()
            try await makeInitialStore(in: folder)
            let plan = FaultPlan(failAt: step, mode: mode)
            let acknowledged = try await run(in: folder, plan: plan)
            let failedStep = plan.recorded[step]

            let state = try await snapshot(of: folder)
            #expect(state == before || state == after, "fault at step \(step) (\(failedStep)) left a mixed state")
            if acknowledged {
                #expect(state == after, "write returned at step \(step) (\(failedStep)) but the change was lost")
            }
            outcomes.append("\(failedStep): \(state == after ? "after" : "before")")
            // Nothing left behind: no temp files, an empty journal.
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: folder.file(".folio/tmp").path).isEmpty,
                "temp files left after a fault at \(failedStep)")
            #expect(
                try folder.bytes(".folio/journal").count == Journal.headerSize,
                "journal not emptied after a fault at \(failedStep)")
            // Kept versions (.folio/versions/) are written before the rename, without fsync.
            #expect(
                Set(folder.allFiles().filter { !$0.hasPrefix("outbox/") && !$0.hasPrefix(KeptVersions.folder + "/") }).isSubset(of: [
                    ".folio/journal", ".folio/lock", ".folio/index/todos", ".folio/written", ".folio/writer.json", ".folio/.gitignore",
                    ".folio/outbox-entities",
                    "folio.json", "tags.json",
                    "todos/2026-11/2026-11-20.json", "todos/2026-11/2026-11-21.json", "todos/2026-12/2026-12-24.json",
                ]), "unexpected files after a fault at \(failedStep): \(folder.allFiles())")
        }
        if ProcessInfo.processInfo.environment["FOLIO_SHOW_FAULTS"] != nil { print(outcomes.joined(separator: "\n")) }
        // Both outcomes must occur: faults before the commit point roll back, after it roll forward.
        #expect(outcomes.contains { $0.hasSuffix("before") } && outcomes.contains { $0.hasSuffix("after") }, "\(outcomes)")
    }

    @Test func aFailedJournalSyncFailsTheWriteAndLeavesNoTrace() async throws {
        let folder = TemporaryFolder()
        try await makeInitialStore(in: folder)
        let before = try await snapshot(of: folder)
        let plan = FaultPlan(
            failAt: 1,
            counting: { step in
                [.write(StoreLayout.journal), .sync(StoreLayout.journal), .truncate(StoreLayout.journal)].contains(step)
            })
        let store = try await Store.open(at: folder.url, configuration: .testing(hook: plan.hook))
        await expectFolioError(.io) { try await store.write { tx in try transaction(tx) } }
        // The record is cut off the journal and that cut is synced; the failed sync itself is
        // never retried.
        #expect(
            plan.recorded == [
                .write(StoreLayout.journal), .sync(StoreLayout.journal),
                .truncate(StoreLayout.journal), .sync(StoreLayout.journal),
            ])
        // The store reloads from disk and goes on working; the failed sync was not retried.
        #expect(try await store.fetch(Query<Tag>()) == before.tags)
        try await store.write { tx in try tx.upsert(Tag(id: "later", name: "Later", color: "#000000")) }
        try await store.close()
        #expect(try await snapshot(of: folder).tags.map(\.id) == ["home", "later"])
    }
}
