@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// The todo app's models evolving across two versions, with data and commands on disk: version 1
/// syncs some changes, makes more offline, and quits; version 2 renames `title` to `text`, makes
/// `priority` a string and adds a non-optional `notes`, then sends what version 1 queued to a
/// server that now accepts only version 2's shape.
@Suite struct TodoMigrationTests {
    enum V1 {
        struct Todo: Entity {
            static let collection = "todos"
            static let partitioning = Partitioning<Todo>.day(\.date)
            static let syncMode = SyncMode.push(coalescing: true)
            var id = UUID()
            var title: String
            var date: String
            var done = false
            var priority = 0
            var tagID: String?
        }
    }

    enum V2 {
        struct Todo: Entity, Equatable {
            static let collection = "todos"
            static let partitioning = Partitioning<Todo>.day(\.date)
            static let syncMode = SyncMode.push(coalescing: true)
            var id: UUID
            var text: String
            var date: String
            var done: Bool
            var priority: String   // "low", "normal", "high", "urgent"
            var notes: String
            var tagID: String?
        }

        static let priorities = ["low", "normal", "high", "urgent"]

        static var migrator: Migrator {
            var migrator = Migrator()
            migrator.registerMigration(
                "2-todo-text-priority-notes",
                [
                    .convert(V1.Todo.self, from: "todos", to: V2.Todo.self) { old in
                        V2.Todo(
                            id: old.id, text: old.title, date: old.date, done: old.done,
                            priority: priorities[min(max(old.priority, 0), 3)], notes: "", tagID: old.tagID)
                    }
                ])
            return migrator
        }
    }

    @Test func pendingCommandsOfVersionOneReachTheServerInVersionTwosShape() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let folder = TemporaryFolder()
        // Version 1: four todos, synced; then offline edits (an upsert with a base, a create, a delete).
        var todos = (0..<4).map { V1.Todo(title: "todo \($0)", date: "2026-11-2\($0)", priority: $0) }
        do {
            let store = try await Store.open(at: folder.url, configuration: .testing())
            let initial = todos
            try await store.write { tx in for todo in initial { try tx.upsert(todo) } }
            var sync = SyncEngine.Configuration.testing
            sync.sync(V1.Todo.self)
            let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: server.baseURL), configuration: sync)
            #expect(try await engine.drainNow().sent == 4)
            await engine.stop()
            todos[0].title = "todo 0, edited offline"
            todos[1].date = "2026-11-30"
            let created = V1.Todo(title: "made offline", date: "2026-11-25", priority: 3)
            let (edited, moved, deleted) = (todos[0], todos[1], todos[3].id)
            try await store.write { tx in
                try tx.upsert(edited)
                try tx.upsert(moved)
                try tx.upsert(created)
                try tx.delete(V1.Todo.self, id: deleted)
            }
            todos.append(created)
            #expect(try await store.pendingCommandCount() == 4)
            try await store.close()
        }
        let queued = try FileManager.default.contentsOfDirectory(atPath: folder.file("outbox").path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(queued.count == 4)

        // The server is upgraded first: it refuses version 1's shape from now on.
        server.permanentRejection = { request in request.method == "PUT" && String(decoding: request.body, as: UTF8.self).contains("\"title\"") }

        // Version 2 opens the store: the data and the queued commands are migrated, none added.
        var configuration = Store.Configuration.testing()
        configuration.migrator = V2.migrator
        let store = try await Store.open(at: folder.url, configuration: configuration)
        let after = try FileManager.default.contentsOfDirectory(atPath: folder.file("outbox").path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(after == queued, "a migration does not flood the outbox")
        for name in after {
            let command = try JSONSerialization.jsonObject(with: folder.bytes("outbox/" + name)) as! [String: Any]
            for key in ["entity", "base"] {
                guard let entity = command[key] as? [String: Any] else { continue }
                #expect(
                    entity["title"] == nil && entity["text"] is String && entity["priority"] is String && entity["notes"] as? String == "",
                    "\(name).\(key): \(entity)")
            }
        }
        let all = Set(try await store.fetch(Query<V2.Todo>()).map(\.id))
        let expected: Set<UUID> = Set(todos.map(\.id)).subtracting([todos[3].id])
        #expect(all == expected)
        #expect(try await store.get(V2.Todo.self, id: todos[0].id)?.text == "todo 0, edited offline")
        #expect(try await store.get(V2.Todo.self, id: todos[1].id)?.date == "2026-11-30")
        #expect(try await store.undecodableEntities(V2.Todo.self).isEmpty)

        // Version 2 sends what version 1 queued: all accepted, none dead-lettered.
        var sync = SyncEngine.Configuration.testing
        sync.sync(V2.Todo.self)
        let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: server.baseURL), configuration: sync)
        let report = try await engine.drainNow()
        await engine.stop()
        #expect(report.sent == 4 && report.deadLettered == 0, "\(report)")
        #expect(try await store.failedCommands().isEmpty)
        for todo in todos where todo.id != todos[3].id && todo.id != todos[2].id {
            let stored = try #require(server.entity("todos", todo.id.uuidString))
            let decoded = try SyncHarness.decoder.decode(V2.Todo.self, from: stored.json)
            #expect(decoded == (try await store.get(V2.Todo.self, id: todo.id)), "the server holds version 2's entity")
        }
        #expect(server.entity("todos", todos[3].id.uuidString) == nil)
        try await store.close()
        #expect(try StoreFiles.migrations(folder) == ["2-todo-text-priority-notes"])
    }

    /// When the server must learn of a migration's changes, the app says so: each changed entity
    /// of the named collections enqueues one command, after the ones already queued.
    @Test func aMigrationEnqueuesCommandsOnlyWhenAsked() async throws {
        let folder = TemporaryFolder()
        let todos = (0..<5).map { V1.Todo(title: "todo \($0)", date: "2026-11-0\($0 + 1)", priority: $0 % 4) }
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in for todo in todos { try tx.upsert(todo) } }
        let queuedBefore = try await store.pendingCommands().map(\.sequence)
        try await store.close()
        var migrator = Migrator()
        migrator.registerMigration(
            "1-priority-floor", enqueuingCommandsFor: ["todos"],
            [
                .changeField("priority", in: "todos") { value in
                    (value?.integerValue ?? 0) < 1 ? .number("1") : value
                }
            ])
        var configuration = Store.Configuration.testing()
        configuration.migrator = migrator
        let migrated = try await Store.open(at: folder.url, configuration: configuration)
        let pending = try await migrated.pendingCommands()
        // The model: one new command per todo whose priority was below 1, numbered after the
        // queue, with its base; the others enqueue nothing.
        let raised = todos.filter { $0.priority < 1 }.map(\.id.uuidString).sorted()
        let added = pending.filter { !queuedBefore.contains($0.sequence) }
        #expect(added.count == raised.count && pending.count == queuedBefore.count + raised.count)
        #expect(added.compactMap(\.entityID).sorted() == raised)
        for command in added {
            #expect(command.sequence > queuedBefore.max()! && command.base != nil && command.operation == .upsert)
            let body = try JSONSerialization.jsonObject(with: command.body!) as! [String: Any]
            #expect(body["priority"] as? Int == 1)
        }
        try await migrated.close()
    }

    /// A delete waiting for the server keeps the entity's server version in its partition file (a
    /// tombstone version); a migration that rewrites and repartitions the collection keeps it.
    @Test func tombstoneVersionsSurviveAMigration() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let folder = TemporaryFolder()
        let todos = (0..<3).map { V1.Todo(title: "todo \($0)", date: "2026-11-0\($0 + 1)") }
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in for todo in todos { try tx.upsert(todo) } }
        var sync = SyncEngine.Configuration.testing
        sync.sync(V1.Todo.self)
        let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: server.baseURL), configuration: sync)
        #expect(try await engine.drainNow().sent == 3)
        await engine.stop()
        let gone = todos[1].id.uuidString
        try await store.write { tx in try tx.delete(V1.Todo.self, id: todos[1].id) }
        try await store.close()
        func versions(_ path: String) throws -> [String: String] {
            guard folder.exists(path) else { return [:] }
            let file = try JSONSerialization.jsonObject(with: folder.bytes(path)) as! [String: Any]
            return file["versions"] as? [String: String] ?? [:]
        }
        let tombstone = try versions("todos/2026-11/2026-11-02.json")[gone]
        #expect(tombstone != nil, "a pending delete keeps the server version")
        var migrator = Migrator()
        migrator.registerMigration("1-by-month", [.renameField("title", to: "text", in: "todos"), .repartition("todos", by: .month)])
        try await StoreFiles.open(folder, migrator).close()
        #expect(try versions("todos/2026-11.json")[gone] == tombstone, "the tombstone version moved with its collection")
        #expect(try versions("todos/2026-11.json").count == 3)
        #expect(try StoreFiles.entities(folder, "todos").count == 2)
    }

    /// A pending command that may already have reached the server (its answer lost) is kept as
    /// queued, byte for byte: its retry must be the same request under its idempotency key. The
    /// others are rewritten.
    @Test func commandsThatMayHaveBeenSentAreKeptAsQueued() async throws {
        let folder = TemporaryFolder()
        let todos = (0..<4).map { V1.Todo(title: "todo \($0)", date: "2026-11-0\($0 + 1)") }
        let store = try await Store.open(at: folder.url, configuration: .testing())
        for todo in todos { try await store.write { tx in try tx.upsert(todo) } }
        let sequences = try await store.pendingCommands().map(\.sequence)
        try await store.close()
        #expect(sequences.count == 4)
        // The model: the first was sent (sent.json's mark), the third failed once (attempts.json).
        let name = { (sequence: UInt64) in String(format: "%020d", sequence) }
        try folder.write("{\"sentThrough\": \(sequences[0])}\n", to: ".folio/sent.json")
        try folder.write("{\"\(name(sequences[2]))\": {\"count\": 1, \"serverErrors\": 0}}\n", to: ".folio/attempts.json")
        let before = try sequences.map { try folder.bytes("outbox/\(name($0)).json") }
        var configuration = Store.Configuration.testing()
        configuration.migrator = V2.migrator
        let report = try await V2.migrator.dryRun(at: folder.url)
        #expect(report.commandsKept == 2 && report.commandsRewritten == 2, "\(report)")
        try await Store.open(at: folder.url, configuration: configuration).close()
        for (index, sequence) in sequences.enumerated() {
            let kept = index == 0 || index == 2
            let bytes = try folder.bytes("outbox/\(name(sequence)).json")
            #expect((bytes == before[index]) == kept, "command \(sequence)")
            let entity = (try JSONSerialization.jsonObject(with: bytes) as! [String: Any])["entity"] as! [String: Any]
            #expect((entity["title"] != nil) == kept && (entity["text"] != nil) == !kept)
        }
    }
}
