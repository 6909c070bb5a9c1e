@testable import FolioSyncServer
import Foundation
import Testing

/// Tokens map to owners, and one owner's data is apart from another's: with the other owner's
/// ids, versions, idempotency keys and partitions, hostile ids (SQL metacharacters, LIKE
/// wildcards, quotes, `\u0000` in a field), oversized and malformed bodies, an owner can neither
/// read, overwrite, delete, replay nor even detect the other's entities. On both storages; on
/// PostgreSQL a server whose `GET` forgets the owner filter must fail the same checks.
@Suite struct OwnerIsolationTests {
    static let alice = "alice-token-0123456789"
    static let bob = "bob-token-9876543210"

    @Test func ownersAreApartInAFolder() async throws {
        let leaks = try await Self.leaks(on: .folder)
        #expect(leaks.isEmpty, "\(leaks.joined(separator: "\n"))")
    }

    @Test(.enabled(if: TestPostgres.runs, TestPostgres.notRunReason))
    func ownersAreApartInPostgreSQL() async throws {
        let leaks = try await Self.leaks(on: .postgres)
        #expect(leaks.isEmpty, "\(leaks.joined(separator: "\n"))")
    }

    @Test(.enabled(if: TestPostgres.runs, TestPostgres.notRunReason))
    func aReadWithoutTheOwnerFilterIsCaught() async throws {
        let leaks = try await Self.leaks(on: .postgres, fault: .noOwnerFilter)
        #expect(!leaks.isEmpty, "a server whose GET ignores the owner passed the isolation checks")
    }

    /// Runs every check; returns what leaked or went wrong (empty: the owners are apart).
    static func leaks(on storage: TestStorage, fault: PostgresStorage.Fault? = nil) async throws -> [String] {
        let harness = try await Harness.start(on: storage) { configuration in
            configuration.ownerTokens = [alice: "alice", bob: "bob"]
            configuration.storageFault = fault
            configuration.maxEntityBytes = 4_096
        }
        defer { Task { try await harness.stop() } }
        var leaks: [String] = []
        func expect(_ condition: Bool, _ text: @autoclosure () -> String) { if !condition { leaks.append(text()) } }
        let client = harness.client
        func send(
            _ token: String?, _ method: String, _ path: String, key: String? = nil, headers: [String: String] = [:],
            json: Any? = nil, body: Data? = nil
        ) async throws -> Answer {
            var headers = headers
            if let token { headers["Authorization"] = "Bearer \(token)" }
            if let key { headers["Idempotency-Key"] = key }
            if let json { return try await client.send(method, path, headers: headers, json: json) }
            return try await client.send(method, path, headers: headers, body: body)
        }

        // Bob's data: a todo, tags with hostile ids, a remembered key.
        let bobTodo = todoJSON(title: "bob's secret", date: "2026-11-22", done: true, tagID: "work")
        let todoID = bobTodo["id"] as? String ?? ""
        let bobKey = newKey()
        let created = try await send(bob, "PUT", "/api/todos/\(todoID)", key: bobKey, headers: ["If-None-Match": "*"], json: bobTodo)
        expect(created.status == 201, "bob's create answered \(created.status) \(created.text)")
        let hostileIDs = ["x' OR '1'='1", "%", "_", "'; DROP TABLE folio_entities; --", "a\"b", "ünï ✓", "100%_off", "$1"]
        for id in hostileIDs {
            let tag: [String: Any] = ["id": id, "name": "bob \u{0} \(id)", "color": "#112233"]
            let answer = try await send(bob, "PUT", "/api/tags/\(escape(id))", key: newKey(), json: tag)
            expect(answer.status == 201, "bob's tag \(id.debugDescription) answered \(answer.status) \(answer.text)")
            let back = try await send(bob, "GET", "/api/tags/\(escape(id))")
            expect(back.object["name"] as? String == "bob \u{0} \(id)", "bob's tag \(id.debugDescription) read back as \(back.text)")
        }
        let bobFeed = try await send(bob, "GET", "/api/todos?since=")

        // Alice cannot read or detect them.
        let read = try await send(alice, "GET", "/api/todos/\(todoID)")
        expect(read.status == 404 && read.text == "null", "alice read bob's todo: \(read.status) \(read.text)")
        for id in hostileIDs {
            let tag = try await send(alice, "GET", "/api/tags/\(escape(id))")
            expect(tag.status == 404, "alice read bob's tag \(id.debugDescription): \(tag.status) \(tag.text)")
        }
        let partition = try await send(alice, "GET", "/api/todos?partition=2026-11-22")
        expect((partition.object["entities"] as? [Any])?.isEmpty == true, "alice's partition pull shows \(partition.text)")
        let tags = try await send(alice, "GET", "/api/tags?partition=")
        expect((tags.object["entities"] as? [Any])?.isEmpty == true, "alice's tags pull shows \(tags.text)")
        let stats = try await send(alice, "GET", "/api/dailyStats?partition=2026-11")
        expect((stats.object["entities"] as? [Any])?.isEmpty == true, "alice's statistics show bob's: \(stats.text)")
        let feed = try await send(alice, "GET", "/api/todos?since=")
        expect((feed.object["changes"] as? [Any])?.isEmpty == true, "alice's feed shows \(feed.text)")
        expect(feed.object["cursor"] as? String == "0", "alice's cursor moved with bob's changes: \(feed.text)")

        // Alice cannot overwrite, delete or replay them.
        let overwrite = try await send(
            alice, "PUT", "/api/todos/\(todoID)", key: newKey(), headers: ["If-Match": created.etag ?? "\"1\""],
            json: todoJSON(todoID, title: "alice was here"))
        expect(overwrite.status == 404, "alice's If-Match on bob's todo answered \(overwrite.status) \(overwrite.text)")
        let delete = try await send(alice, "DELETE", "/api/todos/\(todoID)", key: newKey())
        expect(delete.status == 404, "alice's delete of bob's todo answered \(delete.status) \(delete.text)")
        let replay = try await send(alice, "PUT", "/api/todos/\(todoID)", key: bobKey, headers: ["If-None-Match": "*"], json: bobTodo)
        expect(
            replay.status == 201 && replay.headers["idempotent-replayed"] == nil,
            "alice sending bob's key and body got bob's answer: \(replay.status) \(replay.headers) \(replay.text)")
        expect(replay.version == 1, "alice's first change has version \(replay.version ?? -1), not 1: versions tell of bob's changes")
        let batch: [String: Any] = [
            "requests": hostileIDs.map { id -> [String: Any] in
                ["method": "DELETE", "path": "tags/\(escape(id))", "headers": ["Idempotency-Key": newKey()]]
            }
        ]
        let batchAnswer = try await send(alice, "POST", "/api/_batch", json: batch)
        expect(batchAnswer.status == 200, "alice's batch answered \(batchAnswer.status) \(batchAnswer.text)")

        // Broken bodies and tokens change nothing.
        let huge = try await send(alice, "PUT", "/api/todos/\(todoID)", key: newKey(), json: todoJSON(todoID, title: String(repeating: "x", count: 10_000)))
        expect(huge.status == 413, "an oversized entity answered \(huge.status)")
        let broken = try await send(alice, "PUT", "/api/todos/\(todoID)", key: newKey(), body: Data("{\"id\": \"\(todoID)\", ".utf8))
        expect(broken.status == 400, "a broken body answered \(broken.status)")
        for token in [nil, "alice-token", alice + "x", bob.uppercased(), "' OR 1=1 --"] as [String?] {
            let answer = try await send(token, "GET", "/api/todos/\(todoID)")
            expect(answer.status == 401, "the token \(token ?? "none") answered \(answer.status)")
        }

        // Bob's data is as he left it, and his key still answers with his first answer.
        let bobRead = try await send(bob, "GET", "/api/todos/\(todoID)")
        expect(bobRead.object["title"] as? String == "bob's secret" && bobRead.etag == created.etag, "bob's todo changed: \(bobRead.text)")
        let bobReplay = try await send(bob, "PUT", "/api/todos/\(todoID)", key: bobKey, headers: ["If-None-Match": "*"], json: bobTodo)
        expect(
            bobReplay.status == 201 && bobReplay.headers["idempotent-replayed"] == "true" && bobReplay.etag == created.etag,
            "bob's key no longer replays his answer: \(bobReplay.status) \(bobReplay.text)")
        let bobTags = try await send(bob, "GET", "/api/tags?partition=")
        expect((bobTags.object["entities"] as? [Any])?.count == hostileIDs.count, "bob's tags: \(bobTags.text)")
        let bobFeedAfter = try await send(bob, "GET", "/api/todos?since=")
        expect(bobFeedAfter.body == bobFeed.body, "bob's feed changed: \(bobFeed.text) → \(bobFeedAfter.text)")
        return leaks
    }

    /// An id as one escaped path segment.
    private static func escape(_ id: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/%?#")
        return id.addingPercentEncoding(withAllowedCharacters: allowed) ?? id
    }
}
