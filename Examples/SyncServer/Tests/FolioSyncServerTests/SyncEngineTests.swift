import Folio
import Foundation
@testable import FolioSyncServer
import Testing
import TodoModels

/// Folio's own SyncEngine and HTTPTransport against the server.
@Suite struct SyncEngineTests {
    @Test func offlineChangesArePushedOnceAndStatsPulledBack() async throws {
        let folder = try TemporaryFolder()
        let client = try await Store.open(at: folder.sibling("ClientData"))
        let work = TodoModels.Tag(id: "work", name: "Work", color: "#3366FF")
        var todos = [
            Todo(id: UUID(), title: "Write report", date: "2026-11-22", done: true, priority: 2, tagID: "work"),
            Todo(id: UUID(), title: "Call mum", date: "2026-11-22"),
            Todo(id: UUID(), title: "Plan trip", date: "2026-11-23", done: true),
        ]
        // Offline: written and queued before any server exists.
        let initial = todos
        try await client.write { tx in
            try tx.upsert(work)
            for todo in initial { try tx.upsert(todo) }
        }
        todos[1].done = true
        todos[1].tagID = "work"
        let edited = todos[1]
        try await client.write { tx in try tx.upsert(edited) }
        // Moved to another day while still offline.
        todos[2].date = "2026-12-01"
        let moved = todos[2]
        try await client.write { tx in try tx.upsert(moved) }
        #expect(try await client.pendingCommandCount() > 0)

        let harness = try await Harness.start(in: folder)
        var configuration = SyncEngine.Configuration()
        configuration.sync(Todo.self)
        configuration.sync(TodoModels.Tag.self)
        configuration.refresh(DailyStat.self, after: Todo.self)
        configuration.pollInterval = nil
        var options = HTTPTransport.Options()
        options.batchSize = 2
        let engine = SyncEngine(
            store: client, transport: HTTPTransport(baseURL: harness.server.baseURL, options: options),
            configuration: configuration)
        let report = try await engine.drainNow()
        #expect(report.deadLettered == 0)
        #expect(report.remaining == 0)
        #expect(try await client.pendingCommandCount() == 0)
        #expect(try await client.failedCommands().isEmpty)

        // The server has exactly the client's todos, and computed the stats.
        for day in ["2026-11-22", "2026-11-23", "2026-12-01"] {
            let serverTodos = try await harness.partition("todos", day)
            let local = try await client.fetch(Query<Todo>(.day(day)))
            #expect(Set(serverTodos.keys) == Set(local.map(\.id.uuidString)), "\(day)")
        }
        _ = try await engine.pull(DailyStat.self, partition: "2026-11")
        _ = try await engine.pull(DailyStat.self, partition: "2026-12")
        let november = try #require(try await client.get(DailyStat.self, id: "2026-11-22"))
        #expect(november.total == 2)
        #expect(november.completed == 2)
        #expect(november.tagStats == [TagStat(id: "2026-11-22:work", tagID: "work", count: 2)])
        #expect(try await client.get(DailyStat.self, id: "2026-11-23") == nil)
        let december = try #require(try await client.get(DailyStat.self, id: "2026-12-01"))
        #expect(december.total == 1)
        #expect(december.completed == 1)
        #expect(december.tagStats.isEmpty)

        // A pull of the todos changes nothing: the versions match and the entities are equal.
        #expect(try await engine.pull(Todo.self, partition: "2026-11-22") >= 0)
        #expect(try await client.pendingCommandCount() == 0)
        let local = try await client.fetch(Query<Todo>(.day("2026-11-22")))
        #expect(Set(local.map(\.title)) == ["Write report", "Call mum"])

        // The entity files on both sides hold the same entities.
        try await client.checkpoint()
        try await harness.stop()
        try await client.close()
        let clientFile =
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.sibling("ClientData").appendingPathComponent("todos/2026-11/2026-11-22.json")))
            as? [String: Any]
        let serverFile = try folder.json("todos/2026-11/2026-11-22.json")
        #expect(
            NSDictionary(dictionary: clientFile?["entities"] as? [String: Any] ?? [:])
                == NSDictionary(dictionary: serverFile["entities"] as? [String: Any] ?? [:]))
    }

    @Test func aConcurrentEditIsSettledByTheClientsMerge() async throws {
        let harness = try await Harness.start()
        let folder = try TemporaryFolder("Client")
        let client = try await Store.open(at: folder.url)
        var configuration = SyncEngine.Configuration()
        configuration.sync(Todo.self)
        configuration.pollInterval = nil
        let engine = SyncEngine(store: client, transport: HTTPTransport(baseURL: harness.server.baseURL), configuration: configuration)
        var todo = Todo(id: UUID(), title: "Original", date: "2026-11-22")
        let original = todo
        try await client.write { tx in try tx.upsert(original) }
        _ = try await engine.drainNow()

        // Someone else marks it done on the server.
        let server = try await harness.client.get("/api/todos/\(todo.id.uuidString)")
        var edited = server.object
        edited["done"] = true
        #expect(try await harness.putTodo(edited, key: newKey(), ifMatch: server.etag).status == 200)

        // Meanwhile this client renames it.
        todo.title = "Renamed"
        let renamed = todo
        try await client.write { tx in try tx.upsert(renamed) }
        let report = try await engine.drainNow()
        #expect(report.deadLettered == 0)
        let merged = try await harness.client.get("/api/todos/\(todo.id.uuidString)")
        #expect(merged.object["title"] as? String == "Renamed")
        #expect(merged.object["done"] as? Bool == true)
        #expect(try await client.get(Todo.self, id: todo.id)?.done == true)
        try await harness.stop()
        try await client.close()
    }
}
