import Foundation
@testable import FolioSyncServer
import Testing

/// POST _batch: in order, each as if alone, stopping after the first failure.
@Suite struct BatchTests {
    @Test func aBatchStopsAfterTheFirstFailureAndKeepsWhatCameBefore() async throws {
        let harness = try await Harness.start()
        let first = todoJSON(title: "first"), third = todoJSON(title: "third")
        var bad = todoJSON(title: "bad")
        bad["priority"] = 9
        func item(_ todo: [String: Any], key: String) -> [String: Any] {
            [
                "method": "PUT", "path": "todos/\(todo["id"] as? String ?? "")",
                "headers": ["Idempotency-Key": key, "If-None-Match": "*", "Folio-Partition": "2026-11-22"], "body": todo,
            ]
        }
        let keys = [newKey(), newKey(), newKey()]
        let batch = ["requests": [item(first, key: keys[0]), item(bad, key: keys[1]), item(third, key: keys[2])]]
        let answer = try await harness.client.send("POST", "/api/_batch", json: batch)
        #expect(answer.status == 200, "\(answer.text)")
        let responses = answer.object["responses"] as? [[String: Any]] ?? []
        #expect(responses.count == 2)
        #expect(responses.first?["status"] as? Int == 201)
        #expect((responses.first?["headers"] as? [String: String])?["ETag"] != nil)
        #expect(responses.last?["status"] as? Int == 400)
        #expect((responses.last?["body"] as? [String: Any])?["field"] as? String == "priority")

        let stored = try await harness.partition("todos", "2026-11-22")
        #expect(Set(stored.keys) == [first["id"] as? String ?? ""])

        // The same batch again: the first is replayed, not applied twice.
        let again = try await harness.client.send("POST", "/api/_batch", json: batch)
        let replayed = again.object["responses"] as? [[String: Any]] ?? []
        #expect((replayed.first?["headers"] as? [String: String])?["Idempotent-Replayed"] == "true")
        let feed = try await harness.client.get("/api/todos?since=")
        #expect((feed.object["changes"] as? [Any])?.count == 1)
        try await harness.stop()
    }

    @Test func aBatchOfMixedPushesAppliesAll() async throws {
        let harness = try await Harness.start()
        let todo = todoJSON(done: true, tagID: "home")
        let id = todo["id"] as? String ?? ""
        let tag: [String: Any] = ["id": "home", "name": "Home", "color": "#00aa00"]
        let batch: [String: Any] = [
            "requests": [
                ["method": "PUT", "path": "tags/home", "headers": ["Idempotency-Key": newKey()], "body": tag],
                ["method": "PUT", "path": "todos/\(id)", "headers": ["Idempotency-Key": newKey()], "body": todo],
                ["method": "DELETE", "path": "todos/\(id)", "headers": ["Idempotency-Key": newKey()]],
            ]
        ]
        let answer = try await harness.client.send("POST", "/api/_batch", json: batch)
        let statuses = (answer.object["responses"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? Int }
        #expect(statuses == [201, 201, 204])
        #expect(try await harness.partition("todos", "2026-11-22").isEmpty)
        #expect(try await harness.partition("dailyStats", "2026-11").isEmpty)
        #expect(try await harness.partition("tags", "").count == 1)
        try await harness.stop()
    }

    @Test func malformedBatchesAreRefusedNamingTheField() async throws {
        let harness = try await Harness.start()
        let notABatch = try await harness.client.send("POST", "/api/_batch", json: ["reqs": []])
        #expect(notABatch.status == 400)
        #expect(notABatch.field == "requests")

        let nested = try await harness.client.send("POST", "/api/_batch", json: ["requests": [["method": "POST", "path": "_batch"]]])
        let response = (nested.object["responses"] as? [[String: Any]])?.first
        #expect(response?["status"] as? Int == 400)
        #expect((response?["body"] as? [String: Any])?["field"] as? String == "requests[0].path")

        let noMethod = try await harness.client.send("POST", "/api/_batch", json: ["requests": [["path": "todos/x"]]])
        let noMethodResponse = (noMethod.object["responses"] as? [[String: Any]])?.first
        #expect((noMethodResponse?["body"] as? [String: Any])?["field"] as? String == "requests[0].method")

        #expect(try await harness.client.get("/api/_batch").status == 405)
        try await harness.stop()
    }
}
