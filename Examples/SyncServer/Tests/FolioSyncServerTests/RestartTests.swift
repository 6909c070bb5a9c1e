import Folio
import Foundation
@testable import FolioSyncServer
import Testing

/// Everything the server answered survives a restart on the same folder.
@Suite struct RestartTests {
    @Test func aRestartedServerRemembersEntitiesVersionsKeysAndTheFeed() async throws {
        let first = try await Harness.start()
        let todo = todoJSON(done: true, tagID: "work")
        let key = newKey()
        let created = try await first.putTodo(todo, key: key, create: true)
        #expect(created.status == 201)
        let feedBefore = try await first.client.get("/api/todos?since=")
        try await first.stop()
        #expect(first.folder.exists("idempotencyKeys"))

        let second = try await Harness.start(in: first.folder)
        // The key is remembered: the same answer, nothing applied again.
        let replay = try await second.putTodo(todo, key: key, create: true)
        #expect(replay.status == 201)
        #expect(replay.etag == created.etag)
        #expect(replay.headers["idempotent-replayed"] == "true")
        // A new push still meets the version.
        let stale = try await second.putTodo(todo, key: newKey(), ifMatch: "\"0\"")
        #expect(stale.status == 412)
        #expect(stale.etag == created.etag)
        let feedAfter = try await second.client.get("/api/todos?since=")
        #expect(feedAfter.body == feedBefore.body)
        #expect(try await second.partition("dailyStats", "2026-11").count == 1)

        // Versions keep growing after the restart.
        var changed = todo
        changed["title"] = "after restart"
        let updated = try await second.putTodo(changed, key: newKey(), ifMatch: created.etag)
        let before = Int(created.etag?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? "") ?? 0
        let after = Int(updated.etag?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? "") ?? 0
        #expect(after > before)
        try await second.stop()
    }

    @Test func oldIdempotencyRecordsExpireByWholeDays() async throws {
        let harness = try await Harness.start { $0.rememberKeysForDays = 2 }
        let key = newKey()
        #expect(try await harness.putTodo(todoJSON(), key: key).status == 201)
        try await harness.stop()

        // The day the key was stored in: its file's name.
        let months = try FileManager.default.contentsOfDirectory(atPath: harness.folder.file("idempotencyKeys").path)
        let month = try #require(months.first)
        let days = try FileManager.default.contentsOfDirectory(atPath: harness.folder.file("idempotencyKeys/\(month)").path)
        let day = try #require(days.first?.replacingOccurrences(of: ".json", with: ""))
        let noon = try Date.ISO8601FormatStyle().parse("\(day)T12:00:00Z")

        // Reopen the folder directly, as the server does, and expire as if days had passed.
        let store = try await Store.open(at: harness.folder.url)
        let database = FolderDatabase(store: store)
        let expired = { (now: Date) in SyncServer.lastExpiredDay(rememberDays: 2, now: now) }
        #expect(try await database.forgetIdempotencyRecords(through: expired(noon.addingTimeInterval(2 * 86_400))) == 0)
        #expect(try await database.forgetIdempotencyRecords(through: expired(noon.addingTimeInterval(3 * 86_400))) == 1)
        try await store.close()
        #expect(!harness.folder.exists("idempotencyKeys/\(month)/\(day).json"))
    }
}
