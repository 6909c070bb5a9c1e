@testable import Folio
import Foundation
import Testing

@Suite struct QueryObservationTests {
    @Test func yieldsTheResultAtOnceThenAfterEachChangeThatAltersIt() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        var milk = todo("Buy milk", on: "2026-11-22")
        try await store.write { [milk] tx in try tx.upsert(milk) }
        let open = Query<Todo>(.day("2026-11-22"), where: #Predicate { !$0.done }, sortedBy: [SortDescriptor(\.title)])
        let results = Collector(store.observe(open))
        #expect(await results.wait(forCount: 1))
        #expect(results.items.first == [milk])

        // Unrelated: another day, another collection, and a change to the day that leaves the
        // result as it was (a done todo the predicate filters out). None of them yields.
        try await store.write { tx in try tx.upsert(todo("Other day", on: "2026-11-23")) }
        try await store.write { tx in try tx.upsert(Tag(id: "home", name: "Home", color: "#0a0")) }
        try await store.write { tx in try tx.upsert(todo("Already done", on: "2026-11-22", done: true)) }
        // Related: the result changes.
        let bread = todo("Buy bread", on: "2026-11-22")
        try await store.write { tx in try tx.upsert(bread) }
        #expect(await results.wait(forCount: 2))
        milk.done = true
        try await store.write { [milk] tx in try tx.upsert(milk) }
        #expect(await results.wait(forCount: 3))
        #expect(results.items == [[milk.with(done: false)], [bread, milk.with(done: false)], [bread]])
        try await store.close()
        #expect(await results.waitForEnd())
        #expect(results.error == nil)
    }

    @Test func cancellingEndsTheObservationAndItsSubscription() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let results = Collector(store.observe(Query<Todo>(.day("2026-11-22"))))
        #expect(await results.wait(forCount: 1))
        #expect(await store.subscriberCount == 1)
        results.cancel()
        #expect(await results.waitForEnd())
        var unsubscribed = false
        for _ in 0..<1000 where !unsubscribed {
            let count = await store.subscriberCount, tracking = await store.isTrackingChanges
            unsubscribed = count == 0 && !tracking
            if !unsubscribed { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(unsubscribed)
        // The store goes on; nothing more reaches the cancelled observer.
        try await store.write { tx in try tx.upsert(todo("after", on: "2026-11-22")) }
        #expect(results.items.count == 1 && results.error == nil)
        try await store.close()
    }

    @Test func aLiveQueryKeepsASnapshotCurrent() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        try await store.write { [milk] tx in try tx.upsert(milk) }
        let live = try await store.liveQuery(Query<Todo>(.month("2026-11")))
        #expect(live.snapshot == [milk])
        let bread = todo("Buy bread", on: "2026-11-30")
        try await store.write { tx in try tx.upsert(bread) }
        var current = false
        for _ in 0..<3000 where !current {
            current = live.snapshot.count == 2
            if !current { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(live.snapshot == [milk, bread])
        #expect(live.version == 2)
        live.cancel()
        try await store.close()
    }

    @MainActor @Test func anObservedQueryPublishesOnTheMainActor() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let observed = ObservedQuery(Query<Tag>(), in: store)
        for _ in 0..<3000 where !observed.isLoaded { try await Task.sleep(for: .milliseconds(5)) }
        #expect(observed.isLoaded && observed.results.isEmpty)
        try await store.write { tx in try tx.upsert(Tag(id: "home", name: "Home", color: "#0a0")) }
        for _ in 0..<3000 where observed.results.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        #expect(observed.results.map(\.id) == ["home"])
        try await store.close()
    }
}

extension Todo {
    func with(done: Bool) -> Todo {
        var copy = self
        copy.done = done
        return copy
    }
}
