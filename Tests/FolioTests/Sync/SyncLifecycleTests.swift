@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// The engine running by itself: what starts a drain, going offline and back, stopping.
@Suite struct SyncLifecycleTests {
    /// Waits (at most `seconds`) until `condition` holds.
    private func eventually(_ seconds: Double = 15, _ condition: () async throws -> Bool) async rethrows -> Bool {
        for _ in 0..<Int(seconds * 100) {
            if try await condition() { return true }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { break }
        }
        return try await condition()
    }

    @Test func aRunningEngineSendsWhatIsEnqueuedWithoutBeingAsked() async throws {
        let harness = try await SyncHarness()
        let events = await harness.engine.events()
        await harness.engine.start()
        try await harness.store.write { tx in try tx.upsert(Tag(id: "a", name: "A", color: "#a00")) }
        #expect(await eventually { harness.server.entity("tags", "a") != nil })
        #expect(await eventually { await harness.engine.status.pendingCount == 0 })
        #expect(await harness.engine.status.lastSuccess != nil)
        await harness.engine.stop()
        var seen: [SyncEvent] = []
        for await event in events {
            seen.append(event)
            if case .sent = event { break }
        }
        #expect(seen.contains(.sending(1)) && seen.contains(.sent(1, version: "1")))
        try await harness.close()
    }

    @Test func offlineThenOnline() async throws {
        let harness = try await SyncHarness {
            // Long delays: only the network coming back can explain a quick send.
            $0.initialBackoff = .seconds(60)
            $0.maxBackoff = .seconds(60)
        }
        harness.server.inject(.dropBeforeApplying, times: 1000)
        await harness.engine.start()
        for index in 0..<5 {
            try await harness.store.write { tx in try tx.upsert(Tag(id: "t\(index)", name: "Offline \(index)", color: "#000")) }
        }
        #expect(await eventually { await harness.engine.status.isOnline == false })
        #expect(try await harness.store.pendingCommandCount() == 5, "nothing lost, nothing sent")
        #expect(await harness.engine.status.nextAttempt != nil)
        harness.server.removeAllFaults()
        await harness.engine.networkBecameAvailable()
        #expect(try await eventually { try await harness.store.pendingCommandCount() == 0 })
        #expect(harness.server.appliedLog.map(\.id) == ["t0", "t1", "t2", "t3", "t4"])
        #expect(await harness.engine.status.isOnline)
        try await harness.close()
    }

    @Test func aStalledQueueIsRetriedOnATimerNotOnTheNextWrite() async throws {
        let harness = try await SyncHarness()
        harness.server.inject(.status(503, retryAfter: "0"), times: 3)
        await harness.engine.start()
        try await harness.store.write { tx in try tx.upsert(Tag(id: "x", name: "X", color: "#000")) }
        #expect(try await eventually { try await harness.store.pendingCommandCount() == 0 })
        #expect(harness.server.entity("tags", "x") != nil)
        #expect(try await harness.store.attempts(for: 1) == .none, "bookkeeping is dropped with the command")
        try await harness.close()
    }

    @Test func nothingHappensAfterStopReturns() async throws {
        let harness = try await SyncHarness()
        // Long enough that even a starved test run stops before the server would apply it (the
        // server's sleep ends when it stops).
        harness.server.inject(.delay(seconds: 300))
        await harness.engine.start()
        try await harness.store.write { tx in try tx.upsert(Tag(id: "slow", name: "Slow", color: "#000")) }
        #expect(await eventually { harness.server.requestCount > 0 })
        await harness.engine.stop()
        // Had stop waited for the answer, the server would have applied the request by now.
        #expect(harness.server.appliedLog.isEmpty, "stop cancels the request in flight")
        let requests = harness.server.requestCount
        let journal = try harness.folder.bytes(".folio/journal")
        try await harness.store.write { tx in try tx.upsert(Tag(id: "later", name: "Later", color: "#000")) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(harness.server.requestCount == requests)
        #expect(try await harness.store.pendingCommandCount() == 2)
        #expect(journal.count > 0)
        // And it starts again cleanly.
        await harness.engine.start()
        #expect(try await eventually { try await harness.store.pendingCommandCount() == 0 })
        #expect(harness.server.maxAppliedCountPerKey == 1)
        try await harness.close()
    }

    @Test func anUnreadableCommandStopsTheQueueBeforeIt() async throws {
        let harness = try await SyncHarness()
        try await harness.store.write { tx in try tx.upsert(Tag(id: "a", name: "A", color: "#000")) }
        try await harness.store.checkpoint()
        try harness.folder.write("{ broken", to: "outbox/00000000000000000002.json")
        try await harness.store.close()
        let store = try await Store.open(at: harness.folder.url, configuration: .testing())
        let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: harness.server.baseURL), configuration: .testing)
        let report = try await engine.drainNow()
        #expect(report.sent == 0 && report.stoppedBecause?.contains("unreadable") == true)
        #expect(await engine.status.blockedReason != nil)
        #expect(harness.server.requestCount == 0)
        try await store.close()
        harness.server.stop()
    }
}
