import Foundation
@testable import FolioSyncServer
import Testing

/// DailyStats are computed from the todos in the transaction that changes them.
@Suite struct DailyStatsTests {
    /// The stat of a day, pulled by month.
    func stat(_ harness: Harness, _ day: String) async throws -> [String: Any]? {
        let month = String(day.prefix(7))
        return try await harness.partition("dailyStats", month)[day]?["entity"] as? [String: Any]
    }

    @Test func statsFollowCreatesTogglesMovesAndDeletes() async throws {
        let harness = try await Harness.start()
        var a = todoJSON(title: "a", date: "2026-11-22", done: true, tagID: "work")
        let b = todoJSON(title: "b", date: "2026-11-22", done: true, tagID: "home")
        var c = todoJSON(title: "c", date: "2026-11-22", done: false, tagID: "work")
        var aVersion = try #require(try await harness.putTodo(a, key: newKey()).etag)
        _ = try await harness.putTodo(b, key: newKey())
        var cVersion = try #require(try await harness.putTodo(c, key: newKey()).etag)

        var sunday = try #require(try await stat(harness, "2026-11-22"))
        #expect(sunday["id"] as? String == "2026-11-22")
        #expect(sunday["date"] as? String == "2026-11-22")
        #expect(sunday["total"] as? Int == 3)
        #expect(sunday["completed"] as? Int == 2)
        var tagStats = sunday["tagStats"] as? [[String: Any]] ?? []
        #expect(tagStats.map { $0["tagID"] as? String } == ["home", "work"])
        #expect(tagStats.map { $0["id"] as? String } == ["2026-11-22:home", "2026-11-22:work"])
        #expect(tagStats.map { $0["count"] as? Int } == [1, 1])

        // Toggle c done: work counts 2.
        c["done"] = true
        cVersion = try #require(try await harness.putTodo(c, key: newKey(), ifMatch: cVersion).etag)
        sunday = try #require(try await stat(harness, "2026-11-22"))
        #expect(sunday["completed"] as? Int == 3)
        tagStats = sunday["tagStats"] as? [[String: Any]] ?? []
        #expect(tagStats.map { $0["count"] as? Int } == [1, 2])

        // Move a to another month's day: both days change, in one push.
        a["date"] = "2026-12-01"
        aVersion = try #require(try await harness.putTodo(a, key: newKey(), ifMatch: aVersion).etag)
        sunday = try #require(try await stat(harness, "2026-11-22"))
        #expect(sunday["total"] as? Int == 2)
        #expect((sunday["tagStats"] as? [[String: Any]] ?? []).map { $0["count"] as? Int } == [1, 1])
        let december = try #require(try await stat(harness, "2026-12-01"))
        #expect(december["total"] as? Int == 1)
        #expect(december["completed"] as? Int == 1)
        #expect(try await harness.partition("todos", "2026-11-22").count == 2)
        #expect(try await harness.partition("todos", "2026-12-01").count == 1)

        // Delete the only todo of December 1st: its stat goes.
        #expect(try await harness.delete("todos", a["id"] as? String ?? "", key: newKey(), ifMatch: aVersion).status == 204)
        #expect(try await stat(harness, "2026-12-01") == nil)
        let feed = try await harness.client.get("/api/dailyStats?since=")
        let december1 = (feed.object["changes"] as? [[String: Any]] ?? []).first { $0["id"] as? String == "2026-12-01" }
        #expect(december1?["deleted"] as? Bool == true)
        _ = cVersion
        try await harness.stop()
        #expect(!harness.folder.exists("dailyStats/2026-12.json"))
        #expect(!harness.folder.exists("todos/2026-12/2026-12-01.json"))
        #expect(harness.folder.exists("todos/2026-11/2026-11-22.json"))
    }

    @Test func dailyStatsAreReadOnlyForClients() async throws {
        let harness = try await Harness.start()
        let put = try await harness.client.send(
            "PUT", "/api/dailyStats/2026-11-22", headers: ["Idempotency-Key": newKey()],
            json: ["id": "2026-11-22", "date": "2026-11-22", "total": 99, "completed": 99, "tagStats": []])
        #expect(put.status == 405)
        #expect(put.headers["allow"] == "GET")
        #expect(try await harness.delete("dailyStats", "2026-11-22", key: newKey()).status == 405)
        #expect(try await harness.partition("dailyStats", "2026-11").isEmpty)
        try await harness.stop()
    }
}
