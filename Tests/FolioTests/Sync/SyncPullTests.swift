@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// Pulling server state: partitions, the changes feed, pending local changes kept on top, bad
/// answers refused whole.
@Suite struct SyncPullTests {
    @Test func aPartitionPullStoresTheServersEntitiesAndDeletesWhatItNoLongerHas() async throws {
        let harness = try await SyncHarness()
        let mine = todo("Mine", on: "2026-11-21")
        try await harness.store.write { tx in try tx.upsert(mine) }
        try await harness.engine.drainNow()
        let theirs = todo("From the web app", on: "2026-11-21")
        try harness.editOnServer(theirs, partition: "2026-11-21")
        #expect(try await harness.engine.pull(Todo.self, partition: "2026-11-21") == 2)
        #expect(try await harness.store.fetch(Query<Todo>(.day("2026-11-21"))).count == 2)
        #expect(try await harness.store.pendingCommandCount() == 0, "pulled state enqueues nothing")

        _ = harness.server.remove("todos", mine.id.uuidString)
        let unsent = todo("Not sent yet", on: "2026-11-21")
        try await harness.store.write { tx in try tx.upsert(unsent) }
        try await harness.engine.pull(Todo.self, partition: "2026-11-21")
        let titles = Set(try await harness.store.fetch(Query<Todo>(.day("2026-11-21"))).map(\.title))
        #expect(titles == ["From the web app", "Not sent yet"])
        try await harness.close()
    }

    @Test func pendingLocalChangesAreNotClobbered() async throws {
        let harness = try await SyncHarness()
        let original = Todo(id: UUID(), title: "Call mum", date: "2026-11-21")
        try await harness.store.write { tx in try tx.upsert(original) }
        try await harness.engine.drainNow()
        var edited = original
        edited.done = true
        let local = edited
        try await harness.store.write { tx in try tx.upsert(local) }   // pending, offline
        var server = original
        server.title = "Call mum (Sunday)"
        try harness.editOnServer(server, partition: "2026-11-21")

        try await harness.engine.pull(Todo.self, partition: "2026-11-21")
        var expected = original
        expected.title = server.title
        expected.done = true
        #expect(try await harness.store.get(Todo.self, id: original.id) == expected, "the server's title under the local done")
        #expect(try await harness.store.hasPendingChanges(Todo.self, id: original.id))

        try await harness.engine.drainNow()
        #expect(try harness.onServer(Todo.self, original.id.uuidString) == expected)
        #expect(try await harness.store.get(Todo.self, id: original.id) == expected)
        try await harness.close()
    }

    @Test func derivedDataIsRefreshedAfterThePushesThatAffectIt() async throws {
        let harness = try await SyncHarness { $0.refresh(DailyStat.self, after: Todo.self) }
        // The server computes a day's stat from its todos (here: set by hand, as it would).
        let stat = DailyStat(date: "2026-11-21", completed: 1, tagStats: [TagStat(id: "s1", tagID: "work", count: 1)])
        try harness.editOnServer(stat, partition: "2026-11")
        try await harness.store.write { tx in try tx.upsert(todo("Done thing", on: "2026-11-21", done: true)) }
        try await harness.engine.drainNow()
        #expect(try await harness.store.fetch(Query<DailyStat>(.month("2026-11"))) == [stat])
        let pulls = harness.server.requests.filter { $0.method == "GET" }
        #expect(pulls.map { $0.query["partition"] } == ["2026-11"])
        try await harness.close()
    }

    @Test func theChangesFeedIsPulledPageByPageFromTheLastCursor() async throws {
        let harness = try await SyncHarness()
        harness.server.changePageSize = 7
        let tags = (0..<20).map { Tag(id: "t\($0)", name: "T\($0)", color: "#000") }
        for tag in tags { try harness.editOnServer(tag, partition: "") }
        #expect(try await harness.engine.pullChanges(Tag.self) == 20)
        #expect(try await harness.store.fetch(Query<Tag>()).count == 20)
        #expect(try harness.folder.text(".folio/sync.json").contains("tags"))
        _ = harness.server.remove("tags", "t3")
        #expect(try await harness.engine.pullChanges(Tag.self) == 1, "only what changed since the cursor")
        #expect(try await harness.store.get(Tag.self, id: "t3") == nil)
        try await harness.close()
    }

    @Test func aBadAnswerIsRefusedWholeAndNamesWhatIsWrong() async throws {
        let harness = try await SyncHarness()
        try harness.editOnServer(Tag(id: "good", name: "Good", color: "#0f0"), partition: "")
        _ = harness.server.edit("tags", "bad", json: Data(#"{"id":"bad","name":42}"#.utf8), partition: "")
        let error = await expectFolioError(.badResponse) { try await harness.engine.pull(Tag.self, partition: "") }
        #expect(error?.entityID == "bad")
        #expect(error?.description.contains("name") == true)
        #expect(try await harness.store.fetch(Query<Tag>()).isEmpty, "nothing stored from a refused answer")

        harness.server.inject(.status(200, body: "<html>"), on: .pulls)
        await expectFolioError(.badResponse) { try await harness.engine.pull(Tag.self, partition: "") }
        await expectFolioError(.invalidName) { try await harness.engine.pull(Todo.self, partition: "2026-13-01") }
        try await harness.close()
    }

    @Test func aCollectionTheServerDoesNotServeDeletesNothingLocally() async throws {
        let harness = try await SyncHarness()
        // Stats computed here (the app's own), for a server that does not compute them.
        let stat = DailyStat(date: "2026-11-21", completed: 2, tagStats: [])
        try await harness.store.write { tx in try tx.upsert(stat) }
        harness.server.inject(.status(404, body: #"{"error": "no such collection"}"#), on: .pulls)
        let events = await harness.engine.events()
        #expect(try await harness.engine.pull(DailyStat.self, partition: "2026-11") == 0)
        #expect(try await harness.store.get(DailyStat.self, id: "2026-11-21") == stat, "a 404 pull deleted local data")
        var iterator = events.makeAsyncIterator()
        let event = await iterator.next()
        guard case .notServed(let collection, let partition, let reason)? = event else {
            Issue.record("expected notServed, got \(String(describing: event))")
            return
        }
        #expect(collection == "dailyStats" && partition == "2026-11" && reason.contains("404"))
        try await harness.close()
    }

    @Test func aServerWithoutAFeedEndsNothing() async throws {
        let harness = try await SyncHarness()
        let mine = todo("Mine", on: "2026-11-21")
        try await harness.store.write { tx in try tx.upsert(mine) }
        harness.server.inject(.status(501), on: .pulls)
        #expect(try await harness.engine.pullChanges(Todo.self) == 0)
        #expect(try await harness.store.get(Todo.self, id: mine.id) == mine)
        // The sync goes on: the push still happens.
        #expect(try await harness.engine.drainNow().sent == 1)
        try await harness.close()
    }
}
