@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// A deleted entity never comes back: what the server may have seen is durable knowledge, kept
/// across moves and process restarts (issue: "sync loses nothing and resurrects nothing").
@Suite struct SyncResurrectionTests {
    /// A second process on the same folder: a new store and engine, nothing kept in memory.
    private func relaunch(_ harness: SyncHarness) async throws -> (Store, SyncEngine) {
        await harness.engine.stop()
        try await harness.store.close()
        let store = try await Store.open(at: harness.folder.url, configuration: .testing())
        var options = HTTPTransport.Options()
        options.requestTimeout = .seconds(5)
        let engine = SyncEngine(
            store: store, transport: HTTPTransport(baseURL: harness.server.baseURL, options: options),
            configuration: .testing)
        return (store, engine)
    }

    /// Drains until the queue is empty, waiting out short backoffs; bounded.
    private func drainAll(_ engine: SyncEngine, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for _ in 0..<20 {
            let report = try await engine.drainNow()
            if report.remaining == 0 && report.stoppedBecause == nil { return }
            if let next = report.nextAttempt { try await Task.sleep(for: .seconds(min(2, max(0, next.timeIntervalSinceNow)))) }
        }
        Issue.record("the queue did not drain", sourceLocation: sourceLocation)
    }

    @Test func aTodoMovedEditedAndDeletedIsDeletedOnTheServer() async throws {
        let harness = try await SyncHarness()
        var item = todo("Buy milk", on: "2026-11-21")
        try await harness.store.write { [item] tx in try tx.upsert(item) }
        try await drainAll(harness.engine)
        let version = try #require(harness.server.entity("todos", item.id.uuidString)?.version)

        item.date = "2026-12-02"   // another day, another month
        try await harness.store.write { [item] tx in try tx.upsert(item) }
        let moved = try await harness.store.pendingCommands()
        #expect(moved.last?.baseVersion == version, "the move keeps the server's version")
        item.title = "Buy oat milk"
        try await harness.store.write { [item] tx in try tx.upsert(item) }
        try await harness.store.write { [item] tx in try tx.delete(Todo.self, id: item.id) }
        try await drainAll(harness.engine)

        #expect(harness.server.entity("todos", item.id.uuidString) == nil)
        #expect(try await harness.store.get(Todo.self, id: item.id) == nil)
        #expect(harness.server.maxAppliedCountPerKey == 1)
        try await harness.close()
    }

    @Test(arguments: ["create", "edit"])
    func aDeleteAfterALostAnswerAndARelaunchDeletesOnTheServer(change: String) async throws {
        let harness = try await SyncHarness()
        var item = todo("Buy milk", on: "2026-11-21")
        if change == "edit" {
            try await harness.store.write { [item] tx in try tx.upsert(item) }
            try await drainAll(harness.engine)
            item.title = "Buy oat milk"
        }
        try await harness.store.write { [item] tx in try tx.upsert(item) }
        // The server applies the change; its answer never arrives.
        harness.server.inject(.dropAfterApplying)
        _ = try await harness.engine.drainNow()
        #expect(harness.server.entity("todos", item.id.uuidString) != nil)

        // The app is relaunched, the todo deleted offline, and synced by the new process.
        let (store, engine) = try await relaunch(harness)
        try await store.write { [item] tx in try tx.delete(Todo.self, id: item.id) }
        try await drainAll(engine)
        #expect(harness.server.entity("todos", item.id.uuidString) == nil, "the deleted todo came back on the server")
        #expect(try await store.pendingCommandCount() == 0)
        #expect(try await store.failedCommands().isEmpty)
        #expect(harness.server.maxAppliedCountPerKey == 1)
        await engine.stop()
        try await store.close()
        harness.server.stop()
        // .folio/sent.json is part of the format: verify knows it.
        let problems = try await Store.verify(at: harness.folder.url).problems
        #expect(problems.isEmpty, "\(problems)")
    }

    /// Issue 30's lost delete: the engine reads the head of the queue (a create), the app edits
    /// the todo before the engine marks it as leaving (the create is coalesced into a new one),
    /// and the engine sent the stale create anyway: the server held the todo, while the queue
    /// held only an unsent create, which the app's delete then coalesced away with itself. A
    /// command coalesced away after the queue was read is not marked and never leaves.
    @Test func aCreateCoalescedAwayAfterTheQueueWasReadIsNotSent() async throws {
        let harness = try await SyncHarness()
        var item = todo("Buy milk", on: "2026-11-21")
        try await harness.store.write { [item] tx in try tx.upsert(item) }
        let head = try await harness.store.queueHead(limit: SyncEngine.oneByOneWindow).commands
        #expect(head.map(\.sequence) == [1])
        item.title = "Buy oat milk"
        try await harness.store.write { [item] tx in try tx.upsert(item) }
        #expect(try await harness.store.prepareToSend(head).isEmpty, "a command no longer pending was marked for sending")
        // Nothing of it may have left: the delete still coalesces the whole story away.
        try await harness.store.write { [item] tx in try tx.delete(Todo.self, id: item.id) }
        #expect(try await harness.store.pendingCommandCount() == 0)
        try await drainAll(harness.engine)
        #expect(harness.server.entity("todos", item.id.uuidString) == nil)
        #expect(harness.server.pushes.isEmpty)
        try await harness.close()
    }

    /// The other half of issue 30's lost delete: the app edits a todo while its create is on the
    /// way (the edit cannot coalesce into a command that may have left, so it is a new upsert,
    /// made before any server version was known), the create's answer is recorded, the sync stops
    /// before it marks the edit (the app is suspended, the network goes), and the app deletes the
    /// todo. The pending upsert carries no base version, but the entity has one: the server holds
    /// it, and the delete must be sent. A transport makes the app's edit, and stops the engine,
    /// while the server's answer is on its way.
    @Test func aDeleteAfterAnEditMadeWhileTheCreateWasInFlightIsSent() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        var item = todo("Buy milk", on: "2026-11-21")
        try await store.write { [item] tx in try tx.upsert(item) }
        item.title = "Buy oat milk"
        var options = HTTPTransport.Options()
        options.requestTimeout = .seconds(5)
        let transport = EditingTransport(inner: HTTPTransport(baseURL: server.baseURL, options: options))
        let engine = SyncEngine(store: store, transport: transport, configuration: .testing)
        let stopping = TaskBox()
        transport.onFirstAnswer = { [item] in
            try await store.write { tx in try tx.upsert(item) }
            stopping.task = Task { await engine.stop() }
            try await Task.sleep(for: .milliseconds(100))   // the stop lands while the answer waits
        }
        await #expect(throws: CancellationError.self) { _ = try await engine.drainNow() }
        await stopping.task?.value
        #expect(server.entity("todos", item.id.uuidString) != nil)
        #expect(try await store.pendingCommands().map(\.baseVersion) == [nil], "the edit waits, made with no server version")
        try await store.write { [item] tx in try tx.delete(Todo.self, id: item.id) }
        try await drainAll(SyncEngine(store: store, transport: transport, configuration: .testing))
        #expect(server.entity("todos", item.id.uuidString) == nil, "the deleted todo stayed on the server")
        #expect(try await store.pendingCommandCount() == 0)
        #expect(try await store.failedCommands().isEmpty)
        try await store.close()
    }

    final class TaskBox: @unchecked Sendable {
        var task: Task<Void, Never>?
    }

    /// Runs `onFirstAnswer` once, after the server answered the first push and before the engine hears of it.
    final class EditingTransport: Transport, @unchecked Sendable {
        let inner: HTTPTransport
        var onFirstAnswer: (@Sendable () async throws -> Void)?
        private let lock = NSLock()
        private var answered = false

        init(inner: HTTPTransport) { self.inner = inner }

        func push(_ request: PushRequest) async throws -> PushOutcome {
            let outcome = try await inner.push(request)
            if lock.withLock({ () -> Bool in
                defer { answered = true }; return !answered
            }) {
                try await onFirstAnswer?()
            }
            return outcome
        }

        func pull(_ request: PullRequest) async throws -> PullResponse { try await inner.pull(request) }
    }

    /// The mark covers every collection and every sender: a tag (no coalescing) sent by the app's
    /// own engine, whose answer is lost before the app is killed, is known as possibly sent to the
    /// next process (a migration must not rewrite it), and a window stops before a command
    /// another transaction removed.
    @Test func everyCommandThatMayHaveLeftIsMarkedWhateverItsCollection() async throws {
        let harness = try await SyncHarness()
        for id in ["a", "b", "c"] {
            try await harness.store.write { tx in try tx.upsert(Tag(id: id, name: id, color: "#000000")) }
        }
        let head = try await harness.store.pendingCommands()
        harness.server.inject(.dropAfterApplying)
        _ = try await harness.engine.drainNow()
        #expect(harness.server.entity("tags", "a") != nil)
        let (store, engine) = try await relaunch(harness)
        let marked = try await store.read { state throws(FolioError) in try state.sentThrough() }
        #expect(marked >= head[2].sequence, "the mark says \(marked); commands \(head.map(\.sequence)) may have left")
        // A window whose middle command was dropped since it was read stops before it.
        try await store.dropCommand(head[1].sequence)
        #expect(try await store.prepareToSend(head).map(\.sequence) == [head[0].sequence])
        await engine.stop()
        try await store.close()
        harness.server.stop()
    }

    @Test func aDeleteAfterAnAcknowledgedEditInAnotherProcessSaysWhichVersionItDeletes() async throws {
        let harness = try await SyncHarness()
        var tag = Tag(id: "work", name: "Work", color: "#ff0000")
        try await harness.store.write { [tag] tx in try tx.upsert(tag) }
        try await drainAll(harness.engine)
        // Renamed, then deleted before the rename was sent: the rename's acknowledgement finds no
        // local entity, and the delete is sent by a relaunched process.
        tag.name = "Job"
        try await harness.store.write { [tag] tx in try tx.upsert(tag) }
        try await harness.store.write { tx in try tx.delete(Tag.self, id: "work") }
        #expect(try await harness.store.pendingCommandCount() == 2)
        harness.server.inject(.status(503, retryAfter: "0"), where: { $0.method == "DELETE" })
        _ = try await harness.engine.drainNow()
        let renamedVersion = try #require(harness.server.entity("tags", "work")?.version)
        let (store, engine) = try await relaunch(harness)
        try await drainAll(engine)
        // Every DELETE names the version the server has: none meets a conflict on the way.
        let deletes = harness.server.pushes.filter { $0.method == "DELETE" }
        #expect(
            !deletes.isEmpty && deletes.allSatisfy { $0.header("If-Match") == "\"\(renamedVersion)\"" },
            "\(deletes.map { $0.header("If-Match") ?? "none" })")
        #expect(harness.server.entity("tags", "work") == nil)
        #expect(try await store.failedCommands().isEmpty)
        await engine.stop()
        try await store.close()
        harness.server.stop()
    }

    @Test func aChangeThatChangesNothingDoesNotRecreateWhatTheServerDeleted() async throws {
        let harness = try await SyncHarness()
        var item = todo("Buy milk", on: "2026-11-21")
        try await harness.store.write { [item] tx in try tx.upsert(item) }
        try await drainAll(harness.engine)
        _ = harness.server.remove("todos", item.id.uuidString)   // another client deleted it
        // Moved away and back, offline: no net change.
        item.date = "2026-11-25"
        try await harness.store.write { [item] tx in try tx.upsert(item) }
        item.date = "2026-11-21"
        try await harness.store.write { [item] tx in try tx.upsert(item) }
        try await drainAll(harness.engine)
        #expect(harness.server.entity("todos", item.id.uuidString) == nil, "recreated by a change that changed nothing")
        #expect(try await harness.store.get(Todo.self, id: item.id) == nil)
        try await harness.close()
    }

    @Test func aMergedResendIsFiledUnderTheDateItCarries() async throws {
        let harness = try await SyncHarness()
        let item = todo("Buy milk", on: "2026-11-21")
        try await harness.store.write { tx in try tx.upsert(item) }
        try await drainAll(harness.engine)
        var moved = item
        moved.date = "2026-12-14"   // another client moved it
        try harness.editOnServer(moved, partition: "2026-12-14")
        var done = item
        done.done = true   // this client ticked it
        try await harness.store.write { [done] tx in try tx.upsert(done) }
        try await drainAll(harness.engine)
        let stored = try #require(harness.server.entity("todos", item.id.uuidString))
        #expect(stored.partition == "2026-12-14")
        let merged = try #require(try harness.onServer(Todo.self, item.id.uuidString))
        #expect(merged.date == "2026-12-14" && merged.done)
        try await harness.close()
    }

    @Test func aSyncOnlyProcessRecordsWhatItSentBeforeTheAppCoalesces() async throws {
        let harness = try await SyncHarness()
        let item = todo("Buy milk", on: "2026-11-21")
        try await harness.store.write { tx in try tx.upsert(item) }
        // A process that only syncs (it never touched Todo itself) sends the create; the server
        // applies it, the answer is lost, the process dies.
        let (syncer, engine) = try await relaunch(harness)
        harness.server.inject(.dropAfterApplying)
        _ = try await engine.drainNow()
        await engine.stop()
        try await syncer.close()
        // The app deletes the todo, then syncs.
        let app = try await Store.open(at: harness.folder.url, configuration: .testing())
        try await app.write { tx in try tx.delete(Todo.self, id: item.id) }
        var options = HTTPTransport.Options()
        options.requestTimeout = .seconds(5)
        let appEngine = SyncEngine(
            store: app, transport: HTTPTransport(baseURL: harness.server.baseURL, options: options),
            configuration: .testing)
        try await drainAll(appEngine)
        #expect(harness.server.entity("todos", item.id.uuidString) == nil, "the create was coalesced away with its delete")
        await appEngine.stop()
        try await app.close()
        harness.server.stop()
    }

    @Test func aLaterChangeIsMergedOverAMergedResendNotSentOverIt() async throws {
        let harness = try await SyncHarness()
        try await harness.store.write { tx in try tx.upsert(Tag(id: "work", name: "Work", color: "#111111")) }
        try await drainAll(harness.engine)
        try harness.editOnServer(Tag(id: "work", name: "Work", color: "#222222"), partition: "")   // another client recolours
        try await harness.store.write { tx in try tx.upsert(Tag(id: "work", name: "Job", color: "#111111")) }
        try await harness.store.write { tx in try tx.upsert(Tag(id: "work", name: "Task", color: "#111111")) }
        try await drainAll(harness.engine)
        let final = try #require(try harness.onServer(Tag.self, "work"))
        #expect(final == Tag(id: "work", name: "Task", color: "#222222"), "the other client's colour was lost: \(final)")
        #expect(try await harness.store.get(Tag.self, id: "work") == final)
        try await harness.close()
    }
}
