import Foundation
@testable import FolioSyncServer
import Testing

/// The PROTOCOL.md rules this server once broke: a reused key with another body, repeated
/// members, a lowercase scheme, a pull with no query, a batch after a DELETE of something gone.
@Suite struct ProtocolRulesTests {
    @Test func aKeyReusedWithAnotherBodyIs422NamingTheKeyAndAppliesNothing() async throws {
        let harness = try await Harness.start()
        let key = newKey()
        var todo = todoJSON(title: "first")
        let first = try await harness.putTodo(todo, key: key, create: true)
        #expect(first.status == 201)
        todo["title"] = "second"
        let reused = try await harness.putTodo(todo, key: key, create: true)
        #expect(reused.status == 422)
        #expect(reused.text.contains(key))
        #expect(reused.field == "Idempotency-Key")
        let id = todo["id"] as? String ?? ""
        #expect(try await harness.partition("todos", "2026-11-22")[id]?["version"] as? String == first.headers["etag"]?.trimmingCharacters(in: ["\""]))
        // The same JSON value in other bytes is the same request: replayed.
        todo["title"] = "first"
        let spaced = Data(String(decoding: try JSONSerialization.data(withJSONObject: todo, options: [.prettyPrinted]), as: UTF8.self).utf8)
        let replay = try await harness.client.send("PUT", "/api/todos/\(id)", headers: ["Idempotency-Key": key, "If-None-Match": "*"], body: spaced)
        #expect(replay.status == 201)
        #expect(replay.headers["idempotent-replayed"] == "true")
        try await harness.stop()
    }

    @Test func repeatedMemberNamesAre400NamingTheMember() async throws {
        let harness = try await Harness.start()
        let id = UUID().uuidString
        let todo = String(decoding: try JSONSerialization.data(withJSONObject: todoJSON(id), options: [.sortedKeys]), as: UTF8.self)
        let bodies = [
            ("id", "{\"id\":\"\(id)\"," + todo.dropFirst()),
            ("a", "{\"extra\":{\"a\":1,\"\\u0061\":2}," + todo.dropFirst()),
        ]
        for (member, body) in bodies {
            let answer = try await harness.client.send("PUT", "/api/todos/\(id)", headers: ["Idempotency-Key": newKey()], body: Data(body.utf8))
            #expect(answer.status == 400, "\(answer.text)")
            #expect(answer.field == member)
        }
        let batch = "{\"requests\":[{\"method\":\"PUT\",\"path\":\"todos/\(id)\",\"body\":{\"id\":\"\(id)\"," + todo.dropFirst() + "}]}"
        #expect(try await harness.client.send("POST", "/api/_batch", body: Data(batch.utf8)).status == 400)
        #expect(try await harness.partition("todos", "2026-11-22").isEmpty)
        try await harness.stop()
    }

    @Test func theBearerSchemeIsCaseInsensitive() async throws {
        let harness = try await Harness.start { $0.token = "s3cret" }
        for scheme in ["Bearer", "bearer", "BEARER"] {
            let answer = try await harness.client.send("GET", "/api/tags?partition=", headers: ["Authorization": "\(scheme) s3cret"])
            #expect(answer.status == 200, "\(scheme)")
        }
        for header in ["Basic s3cret", "Bearers3cret", "Bearer s3cre", "s3cret"] {
            let answer = try await harness.client.send("GET", "/api/tags?partition=", headers: ["Authorization": header])
            #expect(answer.status == 401, "\(header)")
        }
        try await harness.stop()
    }

    @Test func aPullNamesAPartitionOrACursor() async throws {
        let harness = try await Harness.start()
        let answer = try await harness.client.get("/api/todos")
        #expect(answer.status == 400)
        #expect(answer.field == "query")
        #expect(try await harness.client.get("/api/todos?since=").status == 200)
        #expect(try await harness.client.get("/api/tags?partition=").status == 200)
        try await harness.stop()
    }

    @Test func aBatchGoesOnAfterADeleteOfSomethingGone() async throws {
        let harness = try await Harness.start()
        let todo = todoJSON()
        let batch: [String: Any] = [
            "requests": [
                ["method": "DELETE", "path": "todos/\(UUID().uuidString)", "headers": ["Idempotency-Key": newKey()]],
                [
                    "method": "PUT", "path": "todos/\(todo["id"] as? String ?? "")", "headers": ["Idempotency-Key": newKey(), "If-None-Match": "*"],
                    "body": todo,
                ],
            ]
        ]
        let answer = try await harness.client.send("POST", "/api/_batch", json: batch)
        let statuses = (answer.object["responses"] as? [[String: Any]])?.map { $0["status"] as? Int }
        #expect(statuses == [404, 201])
        #expect(try await harness.partition("todos", "2026-11-22").count == 1)
        try await harness.stop()
    }
}
