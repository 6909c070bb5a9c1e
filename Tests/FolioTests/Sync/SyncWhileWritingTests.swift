@testable import Folio
import FolioCrashSupport
import FolioTestServer
import Foundation
import Testing

/// An app that writes while its own sync engine drains (the usual case: the person edits while a
/// sync runs): whatever the interleaving of the app's commits with the engine's reading of the
/// queue, marking of what may be sent, sending and acknowledging, the server ends up holding
/// exactly what the app holds, and nothing the app deleted (issue 30: a command coalesced away
/// after the engine read the queue, but sent all the same, left the server with a todo whose
/// delete was then coalesced away too).
///
/// The model is the app's own history of operations (one client, no other writer, so PROTOCOL.md
/// leaves one outcome: the last local state of every entity). `FOLIO_SYNC_WHILE_WRITING_SEED`
/// replays a seed (the interleaving still varies).
@Suite struct SyncWhileWritingTests {
    struct Counts {
        var creates = 0, edits = 0, moves = 0, deletes = 0, passes = 0
    }

    @Test func theServerHoldsWhatTheAppHoldsWhateverTheInterleaving() async throws {
        let seed = SplitMix64.seed(replaying: "FOLIO_SYNC_WHILE_WRITING_SEED")
        var random = SplitMix64(seed: seed)
        let harness = try await SyncHarness()
        let store = harness.store, engine = harness.engine
        // The engine drains again and again while the app writes (bounded in count and time).
        let drainer = Task { () -> Int in
            var passes = 0
            let deadline = ContinuousClock.now + .seconds(120)
            while !Task.isCancelled, passes < 20_000, ContinuousClock.now < deadline {
                passes += 1
                _ = try? await engine.drainNow()
                await Task.yield()
            }
            return passes
        }

        var model: [UUID: Todo] = [:]
        var counts = Counts()
        let days = ["2026-11-20", "2026-11-21", "2026-11-22", "2026-12-01"]
        // A fixed amount of work: 600 operations, most on the few entities just created, so that
        // creates, edits and deletes of one entity fall inside one drain pass.
        for step in 0..<600 {
            let recent = model.keys.sorted { $0.uuidString < $1.uuidString }
            let choice = random.next() % 10
            if recent.isEmpty || choice < 3 {
                let item = todo("todo \(step)", on: days[Int(random.next() % UInt64(days.count))])
                try await store.write { tx in try tx.upsert(item) }
                model[item.id] = item
                counts.creates += 1
            } else {
                let id = recent[Int(random.next() % UInt64(recent.count))]
                var item = model[id]!
                switch choice {
                case 3...5:
                    item.title = "edit \(step)"
                    try await store.write { [item] tx in try tx.upsert(item) }
                    model[id] = item
                    counts.edits += 1
                case 6:
                    item.date = days[Int(random.next() % UInt64(days.count))]
                    try await store.write { [item] tx in try tx.upsert(item) }
                    model[id] = item
                    counts.moves += 1
                default:
                    try await store.write { tx in try tx.delete(Todo.self, id: id) }
                    model[id] = nil
                    counts.deletes += 1
                }
            }
            if random.next() % 4 == 0 { await Task.yield() }
        }
        drainer.cancel()
        counts.passes = await drainer.value
        // The last drain: the queue empties.
        for _ in 0..<50 {
            let report = try await harness.drainAfterBackoff()
            if report.remaining == 0 && report.stoppedBecause == nil { break }
        }
        #expect(try await store.pendingCommandCount() == 0)
        #expect(try await store.failedCommands().isEmpty)

        var (missing, resurrected, differing) = (0, 0, 0)
        var problems: [String] = []
        let onServer = harness.server.entities("todos")
        for (id, item) in model {
            guard let stored = try harness.onServer(Todo.self, id.uuidString) else {
                missing += 1
                problems.append("\(id): on the app, not on the server")
                continue
            }
            if stored.title != item.title || stored.date != item.date {
                differing += 1
                problems.append("\(id): the app has \(item.title) on \(item.date), the server \(stored.title) on \(stored.date)")
            }
        }
        for id in onServer.keys where UUID(uuidString: id).map({ model[$0] == nil }) ?? true {
            resurrected += 1
            problems.append("\(id): deleted on the app, still on the server\n    " + story(of: id, harness).joined(separator: "\n    "))
        }
        let local = try await store.fetch(Query<Todo>())
        #expect(Set(local.map(\.id)) == Set(model.keys), "the app's own store differs from its history")
        print(
            "sync while writing: \(counts.creates + counts.edits + counts.moves + counts.deletes) operations "
                + "(\(counts.creates) creates, \(counts.edits) edits, \(counts.moves) moves, \(counts.deletes) deletes) during "
                + "\(counts.passes) drain passes, \(missing) missing, \(resurrected) resurrected, \(differing) differing "
                + "(seed 0x\(String(seed, radix: 16)))")
        #expect(
            missing == 0 && resurrected == 0 && differing == 0,
            "seed 0x\(String(seed, radix: 16)):\n\(problems.prefix(10).joined(separator: "\n"))")
        #expect(harness.server.maxAppliedCountPerKey == 1)
        try await harness.close()
    }

    /// The requests the server received for one todo and what it applied: a mismatch's story.
    private func story(of id: String, _ harness: SyncHarness) -> [String] {
        let applied = harness.server.appliedLog.filter { $0.collection == "todos" && $0.id == id }
        return harness.server.pushes.filter { $0.path.last == id }.map { push in
            let key = push.headers["idempotency-key"] ?? push.headers["Idempotency-Key"] ?? "no key"
            let condition = push.header("If-Match").map { "If-Match \($0)" } ?? push.header("If-None-Match").map { "If-None-Match \($0)" } ?? "unconditional"
            let outcome = applied.contains { $0.key == key && $0.method == push.method } ? "applied" : "not applied"
            return "\(push.method) \(key.split(separator: "-").last ?? "") \(condition): \(outcome)"
        }
    }
}
