@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// A hand edit is a change like any other (FORMAT.md, "Editing by hand"): a person's save of a
/// data file, made with python while the store is open or while nothing runs, becomes one outbox
/// command with the entity as Folio last wrote it as its base, reaches the server, and survives
/// the next pull.
@Suite struct HandEditSyncTests {
    /// Rewrites the entity with this id in a data file as a person would with a script (python,
    /// saved by rename): a new title, or (nil) the entity removed.
    static func editByHand(_ file: URL, id: String, title: String?) throws {
        try editByHand(file, id: id, field: "title", json: title.map { "\"\($0)\"" })
    }

    /// Sets one field of the entity to a JSON value, or (nil) removes the entity.
    static func editByHand(_ file: URL, id: String, field: String, json: String?) throws {
        let script = """
            import json, os, sys
            path, key, field, value = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
            data = json.load(open(path))
            def walk(node):
                if isinstance(node, dict):
                    if key in node and isinstance(node[key], dict):
                        if value == "-": del node[key]
                        else: node[key][field] = json.loads(value)
                        return True
                    return any(walk(v) for v in list(node.values()))
                return False
            assert walk(data), "id not found"
            tmp = path + ".tmp"
            with open(tmp, "w") as f: json.dump(data, f, indent=2)
            os.replace(tmp, path)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, file.path, id, field, json ?? "-"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "python edit of \(file.path) failed")
    }

    static func dayFile(_ folder: URL, _ day: String) -> URL {
        folder.appendingPathComponent("todos/\(day.prefix(7))/\(day).json")
    }

    @Test(arguments: [false, true]) func editOfASyncedTodoIsSentOnceAndSurvivesThePull(storeClosed: Bool) async throws {
        let harness = try await SyncHarness()
        var store = harness.store
        let milk = todo("Buy milk", on: "2026-11-22")
        let bread = todo("Bread", on: "2026-11-22")
        try await store.write { tx in
            try tx.upsert(milk); try tx.upsert(bread)
        }
        #expect(try await harness.engine.drainNow().sent == 2)
        let version = try #require(harness.server.entity("todos", milk.id.uuidString)?.version)
        try await store.checkpoint()
        let file = Self.dayFile(harness.folder.url, "2026-11-22")
        if storeClosed {
            await harness.engine.stop()
            try await store.close()
            try Self.editByHand(file, id: milk.id.uuidString, title: "Buy oat milk")
            try Self.editByHand(file, id: bread.id.uuidString, title: nil)
            store = try await Store.open(at: harness.folder.url, configuration: .testing(log: harness.log.handler))
        } else {
            try Self.editByHand(file, id: milk.id.uuidString, title: "Buy oat milk")
            try Self.editByHand(file, id: bread.id.uuidString, title: nil)
        }
        // Reading notices the save and adopts it; reading again (and reopening) adds nothing.
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        #expect(try await store.get(Todo.self, id: bread.id) == nil)
        _ = try await store.fetch(Query<Todo>(.day("2026-11-22")))
        let commands = try await store.pendingCommands()
        #expect(commands.count == 2, "\(commands.map { "\($0.operation) \($0.entityID ?? "")" })")
        let upsert = try #require(commands.first { $0.entityID == milk.id.uuidString })
        #expect(upsert.operation == .upsert)
        #expect(upsert.baseVersion == version)
        let base = try upsert.base.map { try SyncHarness.decoder.decode(Todo.self, from: $0) }
        #expect(base?.title == "Buy milk")
        let delete = try #require(commands.first { $0.entityID == bread.id.uuidString })
        #expect(delete.operation == .delete)
        #expect(delete.baseVersion != nil)

        // A pull before the push does not revert the edit (its command is pending).
        let engine = storeClosed ? SyncEngine(store: store, transport: HTTPTransport(baseURL: harness.server.baseURL), configuration: .testing) : harness.engine
        _ = try await engine.pull(Todo.self, partition: "2026-11-22")
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        #expect(try await store.get(Todo.self, id: bread.id) == nil)
        #expect(try await engine.drainNow().sent == 2)
        #expect(try harness.onServer(Todo.self, milk.id.uuidString)?.title == "Buy oat milk")
        #expect(harness.server.entity("todos", bread.id.uuidString) == nil)
        _ = try await engine.pull(Todo.self, partition: "2026-11-22")
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        // Reopened: the edit is Folio's version now, nothing is enqueued again.
        await engine.stop()
        try await store.close()
        let reopened = try await Store.open(at: harness.folder.url, configuration: .testing())
        #expect(try await reopened.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        #expect(try await reopened.pendingCommands().isEmpty)
        try await reopened.close()
        if !storeClosed { await harness.engine.stop() }
        harness.server.stop()
        print("hand edit (store \(storeClosed ? "closed" : "open")): \(commands.count) commands, base version \(version), on the server after push and pull")
    }

    /// A store with two todos of one day, checkpointed into their file.
    static func milkAndBread(in folder: TemporaryFolder) async throws -> (store: Store, milk: Todo, bread: Todo, file: URL) {
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        let bread = todo("Bread", on: "2026-11-22")
        try await store.write { tx in
            try tx.upsert(milk); try tx.upsert(bread)
        }
        try await store.checkpoint()
        return (store, milk, bread, dayFile(folder.url, "2026-11-22"))
    }

    /// A person saves the same todo several times before Folio checkpoints: each save is
    /// adopted, the last one is what the store serves and writes, and one command carries it.
    /// (Before: a second save of a todo the first save changed read as made against a change
    /// committed since, the first adoption, and the checkpoint wrote the first save over it.)
    /// `secondReader`: the later saves are read by another process than the one that adopted
    /// the first.
    @Test(arguments: [false, true]) func savesInARowAreAllAdopted(secondReader: Bool) async throws {
        let folder = TemporaryFolder()
        let (store, milk, bread, file) = try await Self.milkAndBread(in: folder)
        try Self.editByHand(file, id: milk.id.uuidString, title: "Buy oat milk")
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        let reader = secondReader ? try await Store.open(at: folder.url, configuration: .testing()) : store
        try Self.editByHand(file, id: milk.id.uuidString, title: "Buy soy milk")
        #expect(try await reader.get(Todo.self, id: milk.id)?.title == "Buy soy milk")
        try Self.editByHand(file, id: bread.id.uuidString, title: "Rye bread")
        try Self.editByHand(file, id: milk.id.uuidString, title: "Buy rice milk")
        #expect(try await reader.get(Todo.self, id: milk.id)?.title == "Buy rice milk")
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy rice milk")
        try await reader.checkpoint()
        #expect(try String(contentsOf: file, encoding: .utf8).contains("Buy rice milk"))
        if secondReader { try await reader.close() }
        try await store.close()
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.get(Todo.self, id: milk.id)?.title == "Buy rice milk")
        #expect(try await reopened.get(Todo.self, id: bread.id)?.title == "Rye bread")
        let commands = try await reopened.pendingCommands().filter { $0.entityID == milk.id.uuidString }
        #expect(commands.count == 1)
        #expect(try commands.last?.body.map { try SyncHarness.decoder.decode(Todo.self, from: $0) }?.title == "Buy rice milk")
        try await reopened.close()
    }

    /// The same while the app has a change of another todo of the file that is not checkpointed
    /// yet: the adopted save is then not Folio's version of the file (the file lacks the app's
    /// change), and a second save of the same todo is still adopted, because the file it replaced
    /// held the first one.
    @Test func savesInARowBesideAPendingChangeAreAllAdopted() async throws {
        let folder = TemporaryFolder()
        let (store, milk, bread, file) = try await Self.milkAndBread(in: folder)
        var rye = bread
        rye.title = "Rye bread"
        try await store.write { [rye] tx in try tx.upsert(rye) }
        try Self.editByHand(file, id: milk.id.uuidString, title: "Buy oat milk")
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        try Self.editByHand(file, id: milk.id.uuidString, title: "Buy soy milk")
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy soy milk")
        #expect(try await store.get(Todo.self, id: bread.id)?.title == "Rye bread")
        try await store.close()
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.get(Todo.self, id: milk.id)?.title == "Buy soy milk")
        #expect(try await reopened.get(Todo.self, id: bread.id)?.title == "Rye bread")
        try await reopened.close()
    }

    /// A save that is merged (it reads as made from an older buffer: the todo Folio added last
    /// is missing from it) is not kept as Folio's version when it is adopted: every process then
    /// serves the same merge, not the file as saved.
    @Test func aMergedSaveIsServedAlikeByEveryProcess() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        let bread = todo("Bread", on: "2026-11-22")
        try await store.write { tx in try tx.upsert(milk) }
        try await store.checkpoint()
        try await store.write { tx in try tx.upsert(bread) }
        try await store.checkpoint()
        let file = Self.dayFile(folder.url, "2026-11-22")
        try Self.editByHand(file, id: bread.id.uuidString, title: nil)
        try Self.editByHand(file, id: milk.id.uuidString, title: "Buy oat milk")
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        let served = try await store.get(Todo.self, id: bread.id)
        let other = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await other.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        #expect(try await other.get(Todo.self, id: bread.id) == served)
        try await other.close()
        try await store.close()
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.get(Todo.self, id: bread.id) == served)
        try await reopened.close()
    }

    /// A file holding exactly what a checkpoint last wrote is Folio's own (known from
    /// `.folio/written`, without listing its kept versions), and the journal's records still go on
    /// top of it: the bytes a checkpoint wrote, copied back after a person's save was adopted,
    /// serve the adopted save until the next checkpoint, as reading the kept versions would.
    @Test func aFileAsACheckpointLastWroteItServesTheJournalOnTop() async throws {
        let folder = TemporaryFolder()
        let (store, milk, _, file) = try await Self.milkAndBread(in: folder)
        let written = try Data(contentsOf: file)
        try Self.editByHand(file, id: milk.id.uuidString, title: "Buy oat milk")
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        try written.write(to: file)
        let other = try await Store.open(at: folder.url, configuration: .testing())
        for reader in [store, other] {
            #expect(try await reader.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
            #expect(try await reader.fetch(Query<Todo>(.all, where: #Predicate { $0.title.contains("milk") })).map(\.title) == ["Buy oat milk"])
        }
        try await other.close()
        try await store.close()
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        #expect(try await reopened.pendingCommands().filter { $0.entityID == milk.id.uuidString }.count == 1)
        try await reopened.close()
    }

    /// The same for a collection that only pulls: saves in a row, no commands.
    @Test func savesInARowOfAPullOnlyCollectionAreAllAdopted() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(DailyStat(date: "2026-11-22", completed: 1, tagStats: [])) }
        try await store.checkpoint()
        let file = folder.url.appendingPathComponent("dailyStats/2026-11.json")
        for completed in [7, 9, 11] {
            try Self.editByHand(file, id: "2026-11-22", field: "completed", json: "\(completed)")
            #expect(try await store.get(DailyStat.self, id: "2026-11-22")?.completed == completed)
        }
        try await store.close()
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.get(DailyStat.self, id: "2026-11-22")?.completed == 11)
        #expect(try await reopened.pendingCommands().isEmpty)
        try await reopened.close()
    }

    @Test func editOfALocalOnlyCollectionQueuesNothingAndRunsTheHook() async throws {
        let folder = TemporaryFolder()
        let seen = LockedBox<[ChangeSet]>([])
        var configuration = Store.Configuration.testing()
        configuration.onOutsideEdit = { sets, tx in
            seen.mutate { $0 += sets }
            try tx.upsert(DailyStat(date: "2026-11-23", completed: 99, tagStats: []))
        }
        let store = try await Store.open(at: folder.url, configuration: configuration)
        try await store.write { tx in try tx.upsert(DailyStat(date: "2026-11-22", completed: 1, tagStats: [])) }
        try await store.checkpoint()
        try await store.close()
        let file = folder.url.appendingPathComponent("dailyStats/2026-11.json")
        let text = try String(contentsOf: file, encoding: .utf8).replacingOccurrences(of: "\"completed\" : 1", with: "\"completed\" : 7")
            .replacingOccurrences(of: "\"completed\": 1", with: "\"completed\": 7")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let reopened = try await Store.open(at: folder.url, configuration: configuration)
        #expect(try await reopened.get(DailyStat.self, id: "2026-11-22")?.completed == 7)
        #expect(try await reopened.pendingCommands().isEmpty)
        #expect(try await reopened.get(DailyStat.self, id: "2026-11-23")?.completed == 99)
        #expect(seen.value.map(\.updated) == [["2026-11-22"]])
        #expect(seen.value.first?.origin == .outsideEdit)
        try await reopened.close()
    }
}
