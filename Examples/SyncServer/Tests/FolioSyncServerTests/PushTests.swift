import Foundation
@testable import FolioSyncServer
import Testing

/// PUT and DELETE: idempotency keys, versions, conflicts.
@Suite struct PushTests {
    @Test func aReplayedKeyIsAnsweredFromMemoryAndAppliedOnce() async throws {
        let harness = try await Harness.start()
        let todo = todoJSON(title: "Buy milk")
        let key = newKey()
        let first = try await harness.putTodo(todo, key: key, create: true)
        #expect(first.status == 201, "\(first.text)")
        let version = try #require(first.etag)
        #expect(first.object["title"] as? String == "Buy milk")

        let again = try await harness.putTodo(todo, key: key, create: true)
        #expect(again.status == 201)
        #expect(again.etag == version)
        #expect(again.body == first.body)
        #expect(again.headers["idempotent-replayed"] == "true")

        // Applied once: one change in the feed for the todo, version unchanged.
        let feed = try await harness.client.get("/api/todos?since=")
        let changes = feed.object["changes"] as? [[String: Any]] ?? []
        #expect(changes.count == 1)
        #expect(changes.first?["version"] as? String == version.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        try await harness.stop()
    }

    @Test func concurrentRequestsWithOneKeyAreAppliedOnce() async throws {
        let harness = try await Harness.start()
        let todo = todoJSON()
        let path = "/api/todos/\(todo["id"] as? String ?? "")"
        let body = try JSONSerialization.data(withJSONObject: todo)
        let headers = ["Idempotency-Key": newKey(), "If-None-Match": "*"]
        let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
            for _ in 0..<8 { group.addTask { try await harness.client.send("PUT", path, headers: headers, body: body) } }
            var answers: [Answer] = []
            for try await answer in group { answers.append(answer) }
            return answers
        }
        #expect(answers.map(\.status) == Array(repeating: 201, count: 8))
        #expect(Set(answers.compactMap(\.etag)).count == 1)
        #expect(answers.filter { $0.headers["idempotent-replayed"] == nil }.count == 1)
        let feed = try await harness.client.get("/api/todos?since=")
        #expect((feed.object["changes"] as? [Any])?.count == 1)
        try await harness.stop()
    }

    @Test func aFieldLeftOutOfAPutIsRemoved() async throws {
        let harness = try await Harness.start()
        var todo = todoJSON(done: true, tagID: "work")
        let created = try await harness.putTodo(todo, key: newKey())
        todo["tagID"] = nil
        let updated = try await harness.putTodo(todo, key: newKey(), ifMatch: created.etag)
        #expect(updated.status == 200)
        #expect(updated.object["tagID"] == nil)
        let stored = try await harness.client.get("/api/todos/\(todo["id"] as? String ?? "")")
        #expect(stored.object["tagID"] == nil)
        #expect(stored.etag == updated.etag)
        let stat = try await harness.partition("dailyStats", "2026-11")["2026-11-22"]?["entity"] as? [String: Any]
        #expect((stat?["tagStats"] as? [Any])?.isEmpty == true)
        try await harness.stop()
    }

    @Test func aKeyReusedForAnotherRequestIsRefused() async throws {
        let harness = try await Harness.start()
        let key = newKey()
        #expect(try await harness.putTodo(todoJSON(), key: key).status == 201)
        let other = try await harness.putTodo(todoJSON(), key: key)
        #expect(other.status == 422)
        #expect(other.field == "Idempotency-Key")
        try await harness.stop()
    }

    @Test func aVersionMismatchIsA412WithTheCurrentEntity() async throws {
        let harness = try await Harness.start()
        var todo = todoJSON(title: "v1")
        let created = try await harness.putTodo(todo, key: newKey(), create: true)
        let version = try #require(created.etag)

        todo["title"] = "v2"
        let updated = try await harness.putTodo(todo, key: newKey(), ifMatch: version)
        #expect(updated.status == 200)
        let newVersion = try #require(updated.etag)
        #expect(newVersion != version)

        // Another client still on the first version.
        todo["title"] = "stale"
        let stale = try await harness.putTodo(todo, key: newKey(), ifMatch: version)
        #expect(stale.status == 412)
        #expect(stale.etag == newVersion)
        #expect(stale.object["title"] as? String == "v2")

        // A create of an entity that exists.
        let create = try await harness.putTodo(todo, key: newKey(), create: true)
        #expect(create.status == 412)
        #expect(create.object["title"] as? String == "v2")

        // A weak tag and a list are understood.
        todo["title"] = "v3"
        let weak = try await harness.putTodo(todo, key: newKey(), ifMatch: "\"999\", W/\(newVersion)")
        #expect(weak.status == 200, "\(weak.text)")

        // An update of an entity the server does not have: a conflict with a deletion.
        let missing = try await harness.putTodo(todoJSON(), key: newKey(), ifMatch: "\"1\"")
        #expect(missing.status == 404)
        #expect(missing.text == "null")
        try await harness.stop()
    }

    @Test func theSameContentAgainKeepsItsVersion() async throws {
        let harness = try await Harness.start()
        let todo = todoJSON()
        let created = try await harness.putTodo(todo, key: newKey())
        let same = try await harness.putTodo(todo, key: newKey(), ifMatch: created.etag)
        #expect(same.status == 200)
        #expect(same.etag == created.etag)
        try await harness.stop()
    }

    @Test func deletesCheckTheVersionAndLeaveATombstoneInTheFeed() async throws {
        let harness = try await Harness.start()
        let todo = todoJSON()
        let id = try #require(todo["id"] as? String)
        let created = try await harness.putTodo(todo, key: newKey(), create: true)
        let version = try #require(created.etag)

        let wrong = try await harness.delete("todos", id, key: newKey(), ifMatch: "\"12345\"")
        #expect(wrong.status == 412)
        #expect(wrong.object["id"] as? String == id)

        let key = newKey()
        let deleted = try await harness.delete("todos", id, key: key, ifMatch: version)
        #expect(deleted.status == 204)
        #expect(try await harness.delete("todos", id, key: key, ifMatch: version).status == 204)   // replayed
        #expect(try await harness.delete("todos", id, key: newKey()).status == 404)   // already gone
        #expect(try await harness.client.get("/api/todos/\(id)").status == 404)
        #expect(try await harness.partition("todos", "2026-11-22").isEmpty)

        let feed = try await harness.client.get("/api/todos?since=")
        let changes = feed.object["changes"] as? [[String: Any]] ?? []
        #expect(changes.count == 1)
        #expect(changes.first?["deleted"] as? Bool == true)

        // Re-created: a new version, never an old one.
        let again = try await harness.putTodo(todo, key: newKey(), create: true)
        #expect(again.status == 201)
        #expect(again.etag != version)
        try await harness.stop()
    }

    @Test func tagsArePushedAndPulledWholeAndUnknownFieldsAreKept() async throws {
        let harness = try await Harness.start()
        let tag: [String: Any] = ["id": "work", "name": "Work", "color": "#FF8800", "emoji": "💼", "extra": ["nested": [1, 2.5, "x"]]]
        let created = try await harness.client.send("PUT", "/api/tags/work", headers: ["If-None-Match": "*", "Idempotency-Key": newKey()], json: tag)
        #expect(created.status == 201, "\(created.text)")
        let pulled = try await harness.partition("tags", "")
        let entity = try #require(pulled["work"]?["entity"] as? [String: Any])
        #expect(entity["emoji"] as? String == "💼")
        #expect((entity["extra"] as? [String: Any])?["nested"] as? [AnyHashable] == [1, 2.5, "x"] as [AnyHashable])
        #expect(pulled["work"]?["version"] as? String == created.etag?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        try await harness.stop()
        let file = try harness.folder.json("tags.json")
        #expect(((file["entities"] as? [String: Any])?["work"] as? [String: Any])?["emoji"] as? String == "💼")
    }
}
