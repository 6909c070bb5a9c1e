@testable import FolioSyncServer
import Foundation
import Testing

/// Running the PostgreSQL storage: the retry loop, servers starting at once on an empty
/// database, a database from a newer server, old keys forgotten in bounded batches, health and
/// readiness, and a connection string whose password is never printed.
@Suite(.enabled(if: TestPostgres.runs, TestPostgres.notRunReason))
struct PostgresOperationsTests {
    @Test func contendedPushesUnderSerializableAreRunAgainAndAppliedOnce() async throws {
        let harness = try await Harness.start(on: .postgres) { $0.postgresIsolation = .serializable }
        let ids = (0..<24).map { _ in UUID().uuidString }
        @Sendable func todo(_ index: Int) -> [String: Any] { todoJSON(ids[index], title: "t\(index)", date: "2026-11-22", done: index % 3 == 0) }
        let sharedKey = newKey()
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in ids.indices {
                group.addTask { try await harness.putTodo(todo(index), key: newKey(), create: true).status }
            }
            // One request sent eight times at once under one key: applied once.
            for _ in 0..<8 { group.addTask { try await harness.putTodo(todo(0), key: sharedKey, create: true).status } }
            var statuses: [Int] = []
            for try await status in group { statuses.append(status) }
            return statuses
        }
        // The 24 creates, and the eight sends of one more request: a 412 each when the create
        // of todos[0] came first, or one 201 then replays.
        #expect(answers.filter { $0 == 201 }.count >= 24, "\(answers)")
        #expect(answers.allSatisfy { $0 == 201 || $0 == 412 }, "\(answers)")
        let retries = try #require(await harness.server.storage as? PostgresStorage).runner.retries
        let stats = try await harness.partition("dailyStats", "2026-11")
        let day = stats["2026-11-22"]?["entity"] as? [String: Any]
        #expect(day?["total"] as? Int == 24, "\(stats)")
        #expect(day?["completed"] as? Int == 8)
        let feed = try await harness.client.get("/api/todos?since=")
        #expect((feed.object["changes"] as? [Any])?.count == 24)
        print("serializable: 32 concurrent pushes to one owner, \(retries) transactions run again")
        #expect(retries > 0, "no transaction met a serialization failure: the retry loop was not exercised")
        try await harness.stop()
    }

    @Test func serversStartingAtOnceOnAnEmptyDatabaseAllStart() async throws {
        let settings = try await TestPostgres.shared.database()
        let folder = try TemporaryFolder()
        let servers = try await withThrowingTaskGroup(of: SyncServer.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var configuration = SyncServer.Configuration(dataFolder: folder.url)
                    configuration.port = 0
                    configuration.postgres = settings
                    return try await SyncServer.start(configuration)
                }
            }
            var started: [SyncServer] = []
            for try await server in group { started.append(server) }
            return started
        }
        #expect(servers.count == 4)
        #expect(try TestPostgres.shared.sql("SELECT version FROM folio_schema", in: settings) == String(PostgresSchema.currentVersion))
        for server in servers { try await server.stop() }
        // A database written by a newer server is refused, and left alone.
        _ = try TestPostgres.shared.sql("UPDATE folio_schema SET version = 99", in: settings)
        var configuration = SyncServer.Configuration(dataFolder: folder.url)
        configuration.port = 0
        configuration.postgres = settings
        await #expect { try await SyncServer.start(configuration) } throws: { "\($0)".contains("schema version 99") }
        #expect(try TestPostgres.shared.sql("SELECT version FROM folio_schema", in: settings) == "99")
    }

    @Test func oldKeysAreForgottenInBoundedBatchesAndRecentOnesKept() async throws {
        let harness = try await Harness.start(on: .postgres)
        let storage = try #require(await harness.server.storage as? PostgresStorage)
        let settings = storage.settings
        let old = 2 * PostgresStorage.forgetBatch + 345
        _ = try TestPostgres.shared.sql(
            """
            INSERT INTO folio_idempotency (owner, key, key_text, stored_day, stored_at, method, path, status, headers)
            SELECT 'shared', 'old-' || g, 'old-' || g, '2026-01-0' || (1 + g % 9), now(), 'PUT', 'todos/x', 201, '{}'
            FROM generate_series(1, \(old)) AS g
            """, in: settings)
        let key = newKey()
        #expect(try await harness.putTodo(todoJSON(), key: key).status == 201)
        let forgotten = try await storage.forgetIdempotencyRecords(through: "2026-02-01")
        #expect(forgotten == old)
        #expect(try TestPostgres.shared.sql("SELECT count(*) FROM folio_idempotency", in: settings) == "1")
        #expect(try TestPostgres.shared.sql("SELECT key_text FROM folio_idempotency", in: settings) == key)
        try await harness.stop()
    }

    @Test func healthAndReadinessAnswerWithoutAToken() async throws {
        let harness = try await Harness.start(on: .postgres) { $0.token = "secret-token" }
        let root = try #require(URL(string: "/", relativeTo: harness.server.baseURL))
        let client = HTTPClient(baseURL: root)
        let health = try await client.get("/health")
        #expect(health.status == 200 && health.object["status"] as? String == "ok")
        let ready = try await client.get("/ready")
        #expect(ready.status == 200 && ready.object["status"] as? String == "ready")
        #expect(try await client.get("/api/todos?since=").status == 401)
        try await harness.stop()
    }

    @Test func thePasswordIsNeverPrinted() async throws {
        let settings = try await TestPostgres.shared.database()
        let folder = try TemporaryFolder()
        let secret = "hunter2-\(UInt32.random(in: 0...UInt32.max))"
        let url = "postgres://\(settings.user):\(secret)@/\(settings.database)?host=\(settings.host)&port=\(settings.port)&sslmode=disable"
        // Trust authentication ignores the password: the server starts, serves and stops.
        let server = try await ServerProcess(["--postgres", url], in: folder, name: "server")
        #expect(try await server.client.get("/api/tags?partition=").status == 200)
        #expect(await server.stop())
        #expect(server.errorText.contains(":***@"), "\(server.errorText)")
        // A database that does not exist: a clear error at once, without the password.
        let missing = try CommandLineTests.run(["--port", "0", "--postgres", url.replacingOccurrences(of: settings.database, with: "nothing_here")])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("does not exist"), "\(missing.errors)")
        // A URL that is not one.
        let wrong = try CommandLineTests.run(["--postgres", "mysql://root:\(secret)@localhost/db"])
        #expect(wrong.status == 2)
        for text in [server.errorText, missing.errors, missing.output, wrong.errors, wrong.output] {
            #expect(!text.contains(secret), "the password was printed: \(text)")
        }
    }
}
