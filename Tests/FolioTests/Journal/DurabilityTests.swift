@testable import Folio
import Foundation
import Testing

@Suite struct DurabilityTests {
    @Test func aDurableWriteCostsOneJournalSyncAndNothingElse() async throws {
        let folder = TemporaryFolder()
        let steps = IORecorder()
        let store = try await Store.open(at: folder.url, configuration: .testing(hook: steps.hook))
        try await store.write { tx in try tx.upsert(todo("Warm up", on: "2026-11-20")) }
        steps.reset()
        try await store.write { tx in
            try tx.upsert(todo("One", on: "2026-11-21"))
            try tx.upsert(todo("Two", on: "2026-11-22"))
            try tx.upsert(Tag(id: "work", name: "Work", color: "#FF0000"))
        }
        let changes = steps.steps.filter { if case .read = $0 { return false } else { return true } }
        #expect(changes == [.write(StoreLayout.journal), .sync(StoreLayout.journal)])
        try await store.close()
    }

    @Test func relaxedWritesDoNotSyncUntilTheCheckpoint() async throws {
        let folder = TemporaryFolder()
        let steps = IORecorder()
        let store = try await Store.open(at: folder.url, configuration: .testing(durability: .relaxed, hook: steps.hook))
        steps.reset()
        for index in 0..<5 {
            try await store.write { tx in try tx.upsert(todo("Task \(index)", on: "2026-11-21")) }
        }
        #expect(!steps.steps.contains { if case .sync = $0 { return true } else { return false } })
        try await store.checkpoint()
        // The checkpoint makes the journal durable before it touches any data file.
        let syncs = steps.steps.filter { if case .sync = $0 { return true } else { return false } }
        #expect(syncs.first == .sync(StoreLayout.journal))
        let firstRename = steps.steps.firstIndex { if case .rename = $0 { return true } else { return false } }
        let journalSync = steps.steps.firstIndex(of: .sync(StoreLayout.journal))
        #expect(journalSync! < firstRename!)
        try await store.close()
    }

    @Test func concurrentWritersShareJournalSyncs() async throws {
        let folder = TemporaryFolder()
        let steps = IORecorder()
        // A writer alone syncs on its own thread, so sharing needs writers that have called
        // `write` while a sync runs. A disk whose journal sync takes 5 ms, and whose first sync
        // waits (at most 30 s) until the other writers have called `write`: on a machine busy with
        // other tests, the tasks that run them may otherwise start one after the other (the test
        // pool's threads have been seen busy elsewhere for over a minute).
        let writers = 32
        let record = steps.hook
        let arrivals = ArrivalGate()
        let hook: IOHook = { step throws(FolioError) in
            try record(step)
            guard step == .sync(StoreLayout.journal) else { return }
            arrivals.waitOnce(for: writers - 1)
            usleep(5_000)
        }
        let store = try await Store.open(at: folder.url, configuration: .testing(hook: hook))
        arrivals.watch(store.arrivals)
        steps.reset()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<writers {
                group.addTask { try await store.write { tx in try tx.upsert(todo("Task \(index)", on: "2026-11-21")) } }
            }
            try await group.waitForAll()
        }
        let syncs = steps.steps.filter { $0 == .sync(StoreLayout.journal) }.count
        let appends = steps.steps.filter { $0 == .write(StoreLayout.journal) }.count
        #expect(appends == writers)
        #expect(syncs < writers / 2, "group commit: \(writers) writes took \(syncs) journal syncs")
        #expect(try await store.fetch(Query<Todo>()).count == writers)
        try await store.close()
    }

    @Test func filesCatchUpSoonAfterWritesStop() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing(checkpointDelay: .milliseconds(50)))
        try await store.write { tx in try tx.upsert(todo("Soon on disk", on: "2026-11-21")) }
        #expect(!folder.exists("todos/2026-11/2026-11-21.json"), "the journal holds it first")
        // Bounded wait (at most 5 s): the idle checkpoint runs 50 ms after the last write. It
        // writes the day file first and empties the journal last, so wait for the last step.
        func caughtUp() throws -> Bool {
            try folder.exists("todos/2026-11/2026-11-21.json") && folder.bytes(".folio/journal").count == Journal.headerSize
        }
        for _ in 0..<500 where try !caughtUp() {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(folder.exists("todos/2026-11/2026-11-21.json"))
        #expect(try folder.bytes(".folio/journal").count == Journal.headerSize)
        try await store.close()
    }

    @Test func theJournalIsCheckpointedWhenItGrows() async throws {
        let folder = TemporaryFolder()
        var configuration = Store.Configuration.testing(durability: .relaxed)
        configuration.checkpointThreshold = 4096
        let store = try await Store.open(at: folder.url, configuration: configuration)
        for index in 0..<40 {
            try await store.write { tx in try tx.upsert(todo("Task \(index) with a long enough title", on: "2026-11-21")) }
        }
        #expect(folder.exists("todos/2026-11/2026-11-21.json"))
        #expect(try folder.bytes(".folio/journal").count < 4096 + 1024)
        try await store.close()
    }
}

/// Holds the first journal sync after ``watch(_:)`` until `count` writers have arrived in
/// `write` (or 3 s passed).
private final class ArrivalGate: @unchecked Sendable {
    private let lock = NSLock()
    private var arrivals: WriterArrivals?

    func watch(_ arrivals: WriterArrivals) { lock.withLock { self.arrivals = arrivals } }

    func waitOnce(for count: Int) {
        guard
            let arrivals = lock.withLock({ () -> WriterArrivals? in
                defer { self.arrivals = nil }
                return self.arrivals
            })
        else { return }
        let deadline = ContinuousClock.now + .seconds(30)
        while arrivals.count < count && ContinuousClock.now < deadline { usleep(1_000) }
    }
}
