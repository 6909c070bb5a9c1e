@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// Per-entity sync status with the real sync engine and a real server on 127.0.0.1.
@Suite struct EntitySyncStatusTests {
    @Test func pendingThenSynced() async throws {
        let harness = try await SyncHarness()
        let milk = todo("Buy milk", on: "2026-11-22")
        var edited = milk
        edited.title = "Buy oat milk"
        try await harness.store.write { tx in try tx.upsert(Tag(id: "home", name: "Home", color: "#0a0")) }
        let rows = Collector(harness.store.observeWithSyncStatus(Query<Todo>(.day("2026-11-22"))))
        #expect(await rows.wait(forCount: 1))
        try await harness.store.write { tx in try tx.upsert(milk) }
        #expect(try await harness.store.syncStatus(of: Todo.self, id: milk.id) == .pending(commands: 1))
        #expect(try await harness.store.syncStatus(of: Tag.self, id: "home") == .pending(commands: 1))
        #expect(try await harness.store.syncStatus(of: Tag.self, id: "nobody") == .synced)

        let report = try await harness.engine.drainNow()
        #expect(report.sent == 2)
        #expect(try await harness.store.syncStatus(of: Todo.self, id: milk.id) == .synced)
        #expect(await rows.wait { $0.last?.first?.syncStatus == .synced })
        let statuses = rows.items.map { $0.map(\.syncStatus) }
        #expect(statuses == [[], [.pending(commands: 1)], [.synced]])
        #expect(rows.items.last?.first?.entity == milk)
        try await harness.close()
    }

    @Test func pendingThenFailedWithTheServersReason() async throws {
        let harness = try await SyncHarness()
        harness.server.inject(.status(422, body: "{\"error\":\"title too long\"}")) { $0.path.first == "todos" }
        let milk = todo("Buy milk", on: "2026-11-22")
        let changes = Collector(await harness.store.changes())
        try await harness.store.write { tx in try tx.upsert(milk) }
        #expect(try await harness.store.syncStatus(of: Todo.self, id: milk.id).hasPendingWrites)
        _ = try await harness.engine.drainNow()
        let status = try await harness.store.syncStatus(of: Todo.self, id: milk.id)
        guard case .failed(_, let reason, let httpStatus) = status else {
            Issue.record("expected failed, got \(status)")
            try await harness.close()
            return
        }
        #expect(httpStatus == 422 && !reason.isEmpty)
        #expect(status.hasPendingWrites)
        // The failure is announced as a sync-status change of the entity, by the sync engine.
        #expect(await changes.wait { $0.contains { $0.origin == .sync && $0.syncStatusChanged == [milk.id.uuidString] } })
        let joined = try await harness.store.withSyncStatus(try await harness.store.fetch(Query<Todo>(.day("2026-11-22"))))
        #expect(joined.map(\.syncStatus) == [status])
        try await harness.close()
    }

    @Test func pulledServerStateIsAnnouncedAsTheSyncEngines() async throws {
        let harness = try await SyncHarness()
        let changes = Collector(await harness.store.changes())
        try harness.editOnServer(Tag(id: "work", name: "Work", color: "#00a"), partition: "")
        _ = try await harness.engine.pull(Tag.self, partition: "")
        #expect(await changes.wait(forCount: 1))
        #expect(changes.items.first == ChangeSet(collection: "tags", inserted: ["work"], partitions: [""], origin: .sync))
        try await harness.close()
    }
}
