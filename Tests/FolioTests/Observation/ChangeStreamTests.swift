@testable import Folio
import Foundation
import Testing

@Suite struct ChangeStreamTests {
    @Test func writesAreAnnouncedAsInsertsUpdatesDeletesAndMoves() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let changes = Collector(await store.changes())
        var milk = todo("Buy milk", on: "2026-11-22")
        let bread = todo("Buy bread", on: "2026-11-22")
        try await store.write { [milk] tx in
            try tx.upsert(milk); try tx.upsert(bread)
        }
        milk.done = true
        try await store.write { [milk] tx in try tx.upsert(milk) }
        milk.date = "2026-11-23"   // a move to another day file
        try await store.write { [milk] tx in try tx.upsert(milk) }
        try await store.write { tx in _ = try tx.delete(Todo.self, id: bread.id) }
        try await store.write { [milk] tx in try tx.upsert(milk) }   // no change: nothing announced
        try await store.write { tx in try tx.upsert(Tag(id: "home", name: "Home", color: "#0a0")) }

        #expect(await changes.wait(forCount: 5))
        let seen = changes.items
        let m = milk.id.uuidString, b = bread.id.uuidString
        #expect(seen.count == 5)
        guard seen.count == 5 else { return }
        // Todos push: each change also queues a command, so the entity's sync status changed too.
        #expect(seen[0] == ChangeSet(collection: "todos", inserted: [m, b], syncStatusChanged: [m, b], partitions: ["2026-11-22"], origin: .thisProcess))
        #expect(seen[1] == ChangeSet(collection: "todos", updated: [m], syncStatusChanged: [m], partitions: ["2026-11-22"], origin: .thisProcess))
        #expect(
            seen[2] == ChangeSet(collection: "todos", updated: [m], syncStatusChanged: [m], partitions: ["2026-11-22", "2026-11-23"], origin: .thisProcess))
        #expect(seen[3] == ChangeSet(collection: "todos", deleted: [b], syncStatusChanged: [b], partitions: ["2026-11-22"], origin: .thisProcess))
        #expect(seen[4].collection == "tags" && seen[4].inserted == ["home"])
        try await store.close()
        #expect(await changes.waitForEnd())
    }

    @Test func aFailedTransactionIsNeverAnnounced() async throws {
        struct Refused: Error {}
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let changes = Collector(await store.changes())
        await #expect(throws: Refused.self) {
            try await store.write { tx in
                try tx.upsert(todo("never", on: "2026-11-22"))
                throw Refused()
            }
        }
        try await store.write { tx in try tx.upsert(Tag(id: "after", name: "After", color: "#000")) }
        #expect(await changes.wait(forCount: 1))
        #expect(changes.items.map(\.collection) == ["tags"])
        try await store.close()
    }

    /// A failed journal sync makes the store rebuild its state from the disk at its next
    /// operation. What it announced before is not announced again, and another process's commit
    /// that the rebuilt state reads first is announced all the same.
    @Test func aStateRebuiltAfterAFailedSyncAnnouncesWhatItHadNotAndNothingTwice() async throws {
        let folder = TemporaryFolder()
        // The observer's second journal sync fails: the one of its second write.
        let plan = FaultPlan(failAt: 2, counting: { $0 == .sync(StoreLayout.journal) })
        let observer = try await Store.open(at: folder.url, configuration: .testing(hook: plan.hook))
        let changes = Collector(await observer.changes())
        try await observer.write { tx in try tx.upsert(Tag(id: "a", name: "A", color: "#000")) }
        await expectFolioError(.io) { try await observer.write { tx in try tx.upsert(Tag(id: "b", name: "B", color: "#000")) } }
        let other = try await Store.open(at: folder.url, configuration: .testing())
        try await other.write { tx in try tx.upsert(Tag(id: "c", name: "C", color: "#000")) }
        try await other.close()
        try await observer.write { tx in try tx.upsert(Tag(id: "d", name: "D", color: "#000")) }
        #expect(await changes.wait { Set($0.flatMap(\.inserted)).isSuperset(of: ["a", "c", "d"]) })
        try await observer.close()
        #expect(await changes.waitForEnd())
        let announced = changes.items.flatMap { $0.inserted.union($0.updated).union($0.deleted).sorted() }
        #expect(announced == ["a", "c", "d"], "each commit announced once, the failed one never: \(changes.items)")
    }

    /// An observed store whose second journal sync fails, with its watcher silenced (only its own
    /// operations look at the journal and the files), after a first write of tag "a" that was
    /// announced.
    static func observerWhoseSecondSyncFails(_ folder: TemporaryFolder) async throws -> (Store, Collector<ChangeSet>) {
        let plan = FaultPlan(failAt: 2, counting: { $0 == .sync(StoreLayout.journal) })
        let observer = try await Store.open(at: folder.url, configuration: .testing(hook: plan.hook))
        let changes = Collector(await observer.changes())
        await observer.silenceWatcher()
        try await observer.write { tx in try tx.upsert(Tag(id: "a", name: "A", color: "#000")) }
        #expect(await changes.wait { Set($0.flatMap(\.inserted)).contains("a") })
        return (observer, changes)
    }

    /// Each change set as "collection ins [...] upd [...] del [...]".
    static func summary(of changeSets: [ChangeSet]) -> [String] {
        changeSets.map { "\($0.collection) ins \($0.inserted.sorted()) upd \($0.updated.sorted()) del \($0.deleted.sorted())" }
    }

    /// Another process's commits that a checkpoint read just before its journal sync failed are
    /// announced by the state rebuilt after the failure: they happened, and only the rebuilt
    /// state could still tell them (its partitions already hold them).
    @Test func anotherProcesssCommitsReadByAFailedCheckpointAreAnnounced() async throws {
        let folder = TemporaryFolder()
        let (observer, changes) = try await Self.observerWhoseSecondSyncFails(folder)
        let other = try await Store.open(at: folder.url, configuration: .testing())
        try await other.write { tx in
            _ = try tx.delete(Tag.self, id: "a")
            try tx.upsert(Tag(id: "c", name: "C", color: "#000"))
        }
        // The observer's second sync is its checkpoint's, after it read the other's records.
        await expectFolioError(.io) { try await observer.checkpoint() }
        try await observer.write { tx in try tx.upsert(Tag(id: "d", name: "D", color: "#000")) }
        try await other.close()
        #expect(await changes.wait { Set($0.flatMap(\.inserted)).isSuperset(of: ["a", "c", "d"]) && Set($0.flatMap(\.deleted)).contains("a") })
        try await observer.close()
        #expect(await changes.waitForEnd())
        let told = Self.summary(of: changes.items)
        #expect(
            told == ["tags ins [\"a\"] upd [] del []", "tags ins [\"c\"] upd [] del [\"a\"]", "tags ins [\"d\"] upd [] del []"],
            "each commit announced once: \(told)")
    }

    /// An entity this process's failed commit changed, then another process changed: the rebuilt
    /// state announces the other's change against what observers were told (the value before
    /// the failed commit), not against the disk.
    @Test func anotherProcesssChangeToAnEntityOfAFailedCommitIsAnnounced() async throws {
        let folder = TemporaryFolder()
        let (observer, changes) = try await Self.observerWhoseSecondSyncFails(folder)
        await expectFolioError(.io) { try await observer.write { tx in try tx.upsert(Tag(id: "a", name: "A2", color: "#000")) } }
        let other = try await Store.open(at: folder.url, configuration: .testing())
        try await other.write { tx in _ = try tx.delete(Tag.self, id: "a") }
        try await observer.write { tx in try tx.upsert(Tag(id: "d", name: "D", color: "#000")) }
        try await other.close()
        #expect(await changes.wait { Set($0.flatMap(\.inserted)).contains("d") })
        try await observer.close()
        #expect(await changes.waitForEnd())
        let told = Self.summary(of: changes.items)
        #expect(
            told == ["tags ins [\"a\"] upd [] del []", "tags ins [] upd [] del [\"a\"]", "tags ins [\"d\"] upd [] del []"],
            "each commit announced once, the failed one never: \(told)")
    }

    /// Another process's commit to a partition this process never read, taken in first by the
    /// state rebuilt after a failed sync, is announced.
    @Test func anotherProcesssCommitToAPartitionNeverHeldIsAnnouncedByTheRebuiltState() async throws {
        let folder = TemporaryFolder()
        let (observer, changes) = try await Self.observerWhoseSecondSyncFails(folder)
        await expectFolioError(.io) { try await observer.write { tx in try tx.upsert(Tag(id: "b", name: "B", color: "#000")) } }
        let other = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        try await other.write { [milk] tx in try tx.upsert(milk) }
        try await observer.write { tx in try tx.upsert(Tag(id: "d", name: "D", color: "#000")) }
        try await other.close()
        #expect(await changes.wait { Set($0.flatMap(\.inserted)).isSuperset(of: ["a", "d", milk.id.uuidString]) })
        try await observer.close()
        #expect(await changes.waitForEnd())
        let told = Self.summary(of: changes.items)
        #expect(
            told == ["tags ins [\"a\"] upd [] del []", "todos ins [\"\(milk.id.uuidString)\"] upd [] del []", "tags ins [\"d\"] upd [] del []"],
            "each commit announced once, the failed one never: \(told)")
    }

    @Test func aSecondStoreOnTheFolderSeesTheFirstOnesWrites() async throws {
        let folder = TemporaryFolder()
        let writer = try await Store.open(at: folder.url, configuration: .testing())
        let reader = try await Store.open(at: folder.url, configuration: .testing())
        _ = try await reader.fetch(Query<Todo>(.day("2026-11-22")))
        let changes = Collector(await reader.changes())
        let milk = todo("Buy milk", on: "2026-11-22")
        try await writer.write { [milk] tx in try tx.upsert(milk) }
        #expect(await changes.wait(forCount: 1))
        #expect(
            changes.items.first
                == ChangeSet(
                    collection: "todos", inserted: [milk.id.uuidString], syncStatusChanged: [milk.id.uuidString],
                    partitions: ["2026-11-22"], origin: .otherProcess))
        // The writer's checkpoint rewrites the file the reader read: the same content is not
        // announced again. A later write shows what came next.
        try await writer.checkpoint()
        try await writer.write { tx in try tx.upsert(Tag(id: "next", name: "Next", color: "#000")) }
        #expect(await changes.wait(forCount: 2))
        #expect(changes.items.count == 2 && changes.items.last?.collection == "tags")
        try await writer.close()
        try await reader.close()
    }

    @Test func unsubscribingStopsTracking() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let changes = Collector(await store.changes())
        #expect(await store.isTrackingChanges)
        changes.cancel()
        #expect(await changes.waitForEnd())
        var stopped = false
        for _ in 0..<1000 where !stopped {
            let tracking = await store.isTrackingChanges, watching = await store.isWatching
            stopped = !tracking && !watching
            if !stopped { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(stopped)
        try await store.close()
    }

    @Test func mergingKeepsTheNetEffect() {
        var first = ChangeSet(collection: "todos", inserted: ["a"], updated: ["b"], origin: .thisProcess)
        first.merge(ChangeSet(collection: "todos", updated: ["a"], deleted: ["a", "b"], origin: .thisProcess))
        #expect(first.inserted.isEmpty && first.updated.isEmpty && first.deleted == ["b"])
        var second = ChangeSet(collection: "todos", deleted: ["c"], origin: .thisProcess)
        second.merge(ChangeSet(collection: "todos", inserted: ["c"], origin: .thisProcess))
        #expect(second.updated == ["c"] && second.inserted.isEmpty && second.deleted.isEmpty)
    }
}
