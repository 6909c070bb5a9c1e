@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// Conflicts: the server's version moved on while a local change waited. One test per policy.
@Suite struct SyncConflictTests {
    /// A todo synced once, then edited on the server (title) and locally (done), offline.
    private func conflict(policy: ConflictPolicy<Todo>) async throws -> (SyncHarness, Todo, server: Todo, local: Todo) {
        let harness = try await SyncHarness { $0.sync(Todo.self, conflicts: policy) }
        let original = Todo(id: UUID(), title: "Buy milk", date: "2026-11-21", priority: 1)
        try await harness.store.write { tx in try tx.upsert(original) }
        try await harness.engine.drainNow()
        var server = original
        server.title = "Buy oat milk"
        try harness.editOnServer(server, partition: "2026-11-21")
        var edited = original
        edited.done = true
        let local = edited
        try await harness.store.write { tx in try tx.upsert(local) }
        return (harness, original, server, local)
    }

    @Test func threeWayMergeKeepsBothSidesChanges() async throws {
        let (harness, original, _, _) = try await conflict(policy: .threeWayMerge)
        let report = try await harness.engine.drainNow()
        #expect(report.conflicts == 1 && report.sent == 1)
        var merged = original
        merged.title = "Buy oat milk"
        merged.done = true
        #expect(try harness.onServer(Todo.self, original.id.uuidString) == merged)
        #expect(try await harness.store.get(Todo.self, id: original.id) == merged)
        #expect(try await harness.store.hasPendingChanges(Todo.self, id: original.id) == false)
        // The resend was a new request over the server's version, with its own key.
        let last = try #require(harness.server.pushes.last)
        #expect(last.idempotencyKey?.contains("@") == true)
        try await harness.close()
    }

    @Test func serverWinsTakesTheServersEntity() async throws {
        let (harness, original, server, _) = try await conflict(policy: .serverWins)
        let report = try await harness.engine.drainNow()
        #expect(report.conflicts == 1 && report.sent == 0)
        #expect(try await harness.store.get(Todo.self, id: original.id) == server)
        #expect(try harness.onServer(Todo.self, original.id.uuidString) == server)
        #expect(try await harness.store.pendingCommandCount() == 0)
        try await harness.close()
    }

    @Test func clientWinsSendsTheLocalEntityOverTheServers() async throws {
        let (harness, original, _, local) = try await conflict(policy: .clientWins)
        try await harness.engine.drainNow()
        #expect(try harness.onServer(Todo.self, original.id.uuidString) == local)
        #expect(try await harness.store.get(Todo.self, id: original.id) == local)
        try await harness.close()
    }

    @Test func aCustomResolverDecides() async throws {
        let (harness, original, _, _) = try await conflict(
            policy: .custom { conflict in
                guard var server = conflict.server, let local = conflict.local else { return .useServer }
                server.title += " (and \(local.done ? "done" : "open"))"
                server.priority = max(server.priority, local.priority) + 1
                return .send(server)
            })
        try await harness.engine.drainNow()
        let stored = try #require(try harness.onServer(Todo.self, original.id.uuidString))
        #expect(stored.title == "Buy oat milk (and done)" && stored.priority == 2)
        #expect(try await harness.store.get(Todo.self, id: original.id) == stored)
        try await harness.close()
    }

    @Test func keepBothParksTheCommandForTheApp() async throws {
        let (harness, original, server, local) = try await conflict(policy: .keepBoth)
        let report = try await harness.engine.drainNow()
        #expect(report.deadLettered == 1)
        let failed = try #require(try await harness.store.failedCommands().first)
        #expect(failed.serverVersion == harness.server.entity("todos", original.id.uuidString)?.version)
        let parked = try SyncHarness.decoder.decode(Todo.self, from: try #require(failed.serverEntity))
        #expect(parked == server)
        #expect(try await harness.store.get(Todo.self, id: original.id) == local, "nothing changes until the app decides")
        #expect(try await harness.store.hasPendingChanges(Todo.self, id: original.id))

        // The app keeps its own: sent over the server's version.
        try await harness.engine.resolveFailedConflict(failed.id, keeping: .local)
        try await harness.engine.drainNow()
        #expect(try harness.onServer(Todo.self, original.id.uuidString) == local)
        #expect(try await harness.store.failedCommands().isEmpty)
        try await harness.close()
    }

    @Test func keepBothThenTheServersSide() async throws {
        let (harness, original, server, _) = try await conflict(policy: .keepBoth)
        try await harness.engine.drainNow()
        let failed = try #require(try await harness.store.failedCommands().first)
        try await harness.engine.resolveFailedConflict(failed.id, keeping: .server)
        #expect(try await harness.store.get(Todo.self, id: original.id) == server)
        #expect(try await harness.store.hasPendingChanges() == false)
        try await harness.close()
    }

    @Test func deletesAgainstEditsAndEditsAgainstDeletes() async throws {
        let harness = try await SyncHarness()
        let kept = Tag(id: "kept", name: "Kept", color: "#111")
        let gone = Tag(id: "gone", name: "Gone", color: "#222")
        try await harness.store.write { tx in
            try tx.upsert(kept)
            try tx.upsert(gone)
        }
        try await harness.engine.drainNow()
        // Another client renames "kept" and deletes "gone"; here "kept" is deleted and "gone"
        // recoloured, offline.
        var renamed = kept
        renamed.name = "Kept and renamed"
        try harness.editOnServer(renamed, partition: "")
        _ = harness.server.remove("tags", "gone")
        var edited = gone
        edited.color = "#f00"
        let recoloured = edited
        try await harness.store.write { tx in
            try tx.delete(Tag.self, id: "kept")
            try tx.upsert(recoloured)
        }
        try await harness.engine.drainNow()
        // Three-way: the edit nobody here saw survives the delete; the local edit recreates.
        #expect(try await harness.store.get(Tag.self, id: "kept") == renamed)
        #expect(try harness.onServer(Tag.self, "kept") == renamed)
        #expect(try harness.onServer(Tag.self, "gone") == recoloured)
        #expect(try await harness.store.hasPendingChanges() == false)
        try await harness.close()
    }

    @Test func mergeIsFieldByField() {
        let base: JSONValue = .object(["a": .number("1"), "b": .number("1"), "c": .object(["x": .number("1"), "y": .number("1")])])
        let local: JSONValue = .object(["a": .number("2"), "b": .number("1"), "c": .object(["x": .number("2"), "y": .number("1")])])
        let server: JSONValue = .object(["a": .number("3"), "b": .number("3"), "c": .object(["x": .number("1"), "y": .number("3")]), "d": .bool(true)])
        let merged = ThreeWayMerge.merge(base: base, local: local, server: server)
        #expect(merged == .object(["a": .number("2"), "b": .number("3"), "c": .object(["x": .number("2"), "y": .number("3")]), "d": .bool(true)]))
    }
}
