@testable import Folio
import Foundation
import Testing

/// An app whose server has its own API (SEEDS.md's TodoService) maps commands to it with a
/// `Transport`; the engine still provides order, retries and bookkeeping.
@Suite struct CustomTransportTests {
    /// The app's existing service: its own calls, its own failures.
    actor TodoService {
        struct Unavailable: Error {}
        private(set) var calls: [String] = []
        private(set) var todos: [String: Data] = [:]
        var failuresLeft = 0

        func failNext(_ count: Int) { failuresLeft = count }

        func updateTodo(id: String, json: Data) throws -> Int {
            if failuresLeft > 0 {
                failuresLeft -= 1
                throw Unavailable()
            }
            calls.append("updateTodo \(id)")
            todos[id] = json
            return calls.count
        }

        func deleteTodo(id: String) {
            calls.append("deleteTodo \(id)")
            todos[id] = nil
        }
    }

    struct TodoServiceTransport: Transport {
        let service: TodoService

        func push(_ request: PushRequest) async throws -> PushOutcome {
            let command = request.command
            guard command.collection == Todo.collection, let id = command.entityID else {
                return .rejected(FailureReason("TodoService has no call for \(command.operation)"))
            }
            switch command.operation {
            case .upsert:
                // A thrown error is retried later with backoff, counted as an attempt.
                let revision = try await service.updateTodo(id: id, json: request.body ?? Data())
                return .applied(version: String(revision), entity: nil)
            case .delete:
                await service.deleteTodo(id: id)
                return .applied(version: nil, entity: nil)
            case .custom:
                return .rejected(FailureReason("TodoService has no custom calls"))
            }
        }

        func pull(_ request: PullRequest) async throws -> PullResponse {
            PullResponse(items: [])
        }
    }

    @Test func commandsMapToTheAppsOwnCallsInOrder() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let service = TodoService()
        let engine = SyncEngine(store: store, transport: TodoServiceTransport(service: service), configuration: .testing)
        let milk = todo("Buy milk", on: "2026-11-21")
        let bread = todo("Buy bread", on: "2026-11-21")
        try await store.write { tx in
            try tx.upsert(milk)
            try tx.upsert(bread)
        }
        try await store.write { tx in try tx.delete(Todo.self, id: milk.id) }
        try await store.write { tx in try tx.upsert(Tag(id: "t", name: "T", color: "#000")) }
        await service.failNext(2)

        var passes = 0
        var sent = 0
        while sent == 0 && passes < 5 {
            let report = try await engine.drainNow()
            sent += report.sent
            passes += 1
            // drainNow honours backoff: wait like an app (milliseconds in tests).
            if let next = report.nextAttempt, next.timeIntervalSinceNow > 0 {
                try await Task.sleep(for: .milliseconds(Int(min(next.timeIntervalSinceNow, 2) * 1000) + 10))
            }
        }
        #expect(passes == 3 && sent == 1, "each call that throws waits for the next attempt")
        // Milk was created and deleted before anything was sent: coalescing left nothing of it.
        #expect(await service.calls == ["updateTodo \(bread.id.uuidString)"])
        #expect(try await store.failedCommands().map(\.command.collection) == ["tags"])
        #expect(try await store.pendingCommandCount() == 0)
        try await store.close()
    }

    /// A server that stores the entity its own way (an upper-cased `title` or `name`) and answers
    /// with it; it refuses entities named "refused".
    struct NormalizingTransport: Transport {
        func push(_ request: PushRequest) async throws -> PushOutcome {
            let object = try JSONSerialization.jsonObject(with: request.body ?? Data())
            guard var fields = object as? [String: Any] else { return .rejected(FailureReason("not an object")) }
            if fields["name"] as? String == "refused" { return .rejected(FailureReason("refused")) }
            for key in ["title", "name"] { if let text = fields[key] as? String { fields[key] = text.uppercased() } }
            return .applied(version: "7", entity: try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]))
        }

        func pull(_ request: PullRequest) async throws -> PullResponse { PullResponse(items: []) }
    }

    @Test func theServersAnswerBecomesTheLocalEntityUnlessALaterChangeWaits() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let engine = SyncEngine(store: store, transport: NormalizingTransport(), configuration: .testing)
        let milk = todo("Buy milk", on: "2026-11-21")
        try await store.write { tx in try tx.upsert(milk) }
        try await engine.drainNow()
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "BUY MILK")
        try await store.checkpoint()
        #expect(try folder.text("todos/2026-11/2026-11-21.json").contains("\"\(milk.id.uuidString)\": \"7\""))

        // Two pending changes of a tag: the answer to the first must not undo the second.
        try await store.write { tx in try tx.upsert(Tag(id: "t", name: "first", color: "#000")) }
        try await store.write { tx in try tx.upsert(Tag(id: "t", name: "refused", color: "#000")) }
        let report = try await engine.drainNow()
        #expect(report.sent == 1 && report.deadLettered == 1)
        #expect(try await store.get(Tag.self, id: "t")?.name == "refused")
        try await store.close()
    }
}
