@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// What the client makes of answers a server should not give: redirects (never followed to
/// another origin with credentials and keys), and an answer about another entity.
@Suite struct HTTPAnswerTests {
    private func command(_ tag: Tag) async throws -> (TemporaryFolder, OutboxCommand) {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(tag) }
        let command = try #require(try await store.pendingCommands().first)
        try await store.close()
        return (folder, command)
    }

    private func push(_ command: OutboxCommand, to base: URL) async throws -> PushOutcome {
        let transport = HTTPTransport(baseURL: base, auth: RotatingAuth(token: "secret", after: "secret2"))
        return try await transport.push(
            PushRequest(
                command: command, body: command.body, precondition: .absent,
                idempotencyKey: command.id))
    }

    @Test func aRedirectToAnotherOriginIsNeverFollowedAndCarriesNoCredentials() async throws {
        let server = try ScriptedHTTPServer()
        let (_, command) = try await command(Tag(id: "work", name: "Work", color: "#ff0000"))
        let outcome = try await push(command, to: server.url(0, "cross/"))
        guard case .retryLater(let reason, _, _) = outcome else {
            Issue.record("a cross-origin redirect was followed: \(outcome)")
            return
        }
        #expect(reason.contains("another origin"), "\(reason)")
        let reached = try server.log()
        #expect(reached.isEmpty, "a request reached the other origin: \(reached)")
    }

    @Test func aSameOrigin308IsFollowedWithItsMethodBodyAndHeaders() async throws {
        let server = try ScriptedHTTPServer()
        let (_, command) = try await command(Tag(id: "work", name: "Work", color: "#ff0000"))
        let outcome = try await push(command, to: server.url(0, "same/"))
        guard case .applied(let version, _) = outcome else {
            Issue.record("not applied: \(outcome)")
            return
        }
        #expect(version == "1")
        let log = try server.log()
        #expect(log.count == 1)
        #expect(log.first?["method"] == "PUT" && log.first?["path"] == "/api/tags/work")
        #expect(log.first?["port"] == String(server.ports[0]))
        #expect(log.first?["idempotency-key"] == command.id)
        #expect(log.first?["authorization"] == "Bearer secret")
        #expect(log.first?["body"]?.contains("\"Work\"") == true)
    }

    @Test func a301IsNotFollowedAndSaysWhy() async throws {
        let server = try ScriptedHTTPServer()
        let (_, command) = try await command(Tag(id: "work", name: "Work", color: "#ff0000"))
        let outcome = try await push(command, to: server.url(0, "moved/"))
        guard case .retryLater(let reason, _, _) = outcome else {
            Issue.record("a 301 for a PUT was followed: \(outcome)")
            return
        }
        #expect(reason.contains("301") && reason.contains("not followed"), "\(reason)")
        #expect(try server.log().isEmpty)
    }

    @Test func anAnswerAboutAnotherEntityIsNotCountedAsSent() async throws {
        let harness = try await SyncHarness()
        try await harness.store.write { tx in try tx.upsert(Tag(id: "work", name: "Work", color: "#ff0000")) }
        harness.server.inject(.status(200, body: ##"{"color": "#000000", "id": "home", "name": "Home"}"##))
        let report = try await harness.engine.drainNow()
        #expect(report.sent == 0)
        #expect(try await harness.store.pendingCommandCount() == 1, "the command still waits")
        let attempts = try await harness.store.attempts(for: 1)
        #expect(attempts.lastError?.contains("another entity") == true, "\(attempts.lastError ?? "")")
        // Nothing of the answer was stored: no version, no entity.
        let stored = try await harness.store.get(Tag.self, id: "work")
        #expect(stored?.name == "Work")
        #expect(try await harness.store.get(Tag.self, id: "home") == nil)
        #expect(try await harness.store.storedVersion(collection: "tags", granularity: .none, id: "work", command: 0, deletedFrom: nil) == nil)
        try await harness.close()
    }
}
