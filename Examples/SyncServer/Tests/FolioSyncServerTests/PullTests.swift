import Foundation
@testable import FolioSyncServer
import Testing

/// GET by partition and by cursor.
@Suite struct PullTests {
    @Test func aPartitionPullReturnsThatDayOnlyWithVersions() async throws {
        let harness = try await Harness.start()
        let monday = todoJSON(title: "monday", date: "2026-11-23")
        let sunday = todoJSON(title: "sunday", date: "2026-11-22")
        let mondayAnswer = try await harness.putTodo(monday, key: newKey())
        _ = try await harness.putTodo(sunday, key: newKey())

        let pulled = try await harness.partition("todos", "2026-11-23")
        #expect(pulled.count == 1)
        let item = try #require(pulled[monday["id"] as? String ?? ""])
        #expect("\"\(item["version"] as? String ?? "")\"" == mondayAnswer.etag)
        #expect((item["entity"] as? [String: Any])?["title"] as? String == "monday")
        #expect(try await harness.partition("todos", "2026-11-24").isEmpty)

        let wrongKind = try await harness.client.get("/api/todos?partition=2026-11")
        #expect(wrongKind.status == 400)
        #expect(wrongKind.field == "partition")
        let notADay = try await harness.client.get("/api/todos?partition=2026-02-30")
        #expect(notADay.status == 400)
        let tagsNeedEmpty = try await harness.client.get("/api/tags?partition=2026-11")
        #expect(tagsNeedEmpty.status == 400)
        try await harness.stop()

        // Closed, the server's folder is laid out like a client's.
        #expect(harness.folder.exists("todos/2026-11/2026-11-23.json"))
        #expect(harness.folder.exists("dailyStats/2026-11.json"))
        #expect(harness.folder.exists("todoVersions/2026-11/2026-11-23.json"))
    }

    @Test func theChangeFeedPagesInOrderAndServesEachEntityOnceAtItsLatestChange() async throws {
        let harness = try await Harness.start { $0.changesPageSize = 2 }
        var todos = (0..<5).map { todoJSON(title: "t\($0)", date: "2026-11-2\($0)") }
        var versions: [String] = []
        for todo in todos { versions.append(try #require(try await harness.putTodo(todo, key: newKey()).etag)) }
        // Change the first again: it moves to the end of the feed.
        todos[0]["title"] = "t0 again"
        _ = try await harness.putTodo(todos[0], key: newKey(), ifMatch: versions[0])
        // Delete the second.
        _ = try await harness.delete("todos", todos[1]["id"] as? String ?? "", key: newKey())

        var seen: [[String: Any]] = []
        var cursor = ""
        var cursors: [Int] = []
        for _ in 0..<10 {
            let page = try await harness.client.get("/api/todos?since=\(cursor)")
            #expect(page.status == 200)
            let changes = page.object["changes"] as? [[String: Any]] ?? []
            #expect(changes.count <= 2)
            seen += changes
            cursor = page.object["cursor"] as? String ?? ""
            cursors.append(Int(cursor) ?? -1)
            if page.object["hasMore"] as? Bool != true { break }
        }
        #expect(cursors == cursors.sorted())
        let ids = seen.compactMap { $0["id"] as? String }
        let expected = [2, 3, 4, 0, 1].map { todos[$0]["id"] as? String ?? "" }
        #expect(ids == expected)
        #expect(seen.last?["deleted"] as? Bool == true)
        #expect((seen[3]["entity"] as? [String: Any])?["title"] as? String == "t0 again")

        // Nothing new since the last cursor.
        let caughtUp = try await harness.client.get("/api/todos?since=\(cursor)")
        #expect((caughtUp.object["changes"] as? [Any])?.isEmpty == true)
        #expect(caughtUp.object["cursor"] as? String == cursor)
        #expect(caughtUp.object["hasMore"] as? Bool == false)

        // Each collection has its own feed: the five days' stats (one since deleted).
        var stats: [[String: Any]] = []
        cursor = ""
        for _ in 0..<10 {
            let page = try await harness.client.get("/api/dailyStats?since=\(cursor)")
            stats += page.object["changes"] as? [[String: Any]] ?? []
            cursor = page.object["cursor"] as? String ?? ""
            if page.object["hasMore"] as? Bool != true { break }
        }
        #expect(stats.count == 5)
        #expect(stats.filter { $0["deleted"] as? Bool == true }.compactMap { $0["id"] as? String } == ["2026-11-21"])

        let bad = try await harness.client.get("/api/todos?since=abc")
        #expect(bad.status == 400)
        #expect(bad.field == "since")
        try await harness.stop()
    }
}
