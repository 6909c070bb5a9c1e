@testable import Folio
import Foundation
import Testing

@Suite struct OutboxTests {
    func commandFiles(_ folder: TemporaryFolder, _ subfolder: String = "outbox") -> [String] {
        folder.allFiles().filter { $0.hasPrefix(subfolder + "/") && !$0.dropFirst(subfolder.count + 1).contains("/") }
    }

    @Test func aChangeAndItsCommandAreCommittedTogether() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        try await store.write { tx in
            try tx.upsert(milk)
            try tx.upsert(DailyStat(date: "2026-11-22", completed: 0, tagStats: []))   // pull-only
            try tx.upsert(Reminder(id: "r", due: Date(timeIntervalSince1970: 0)))   // local-only
        }
        let pending = try await store.pendingCommands()
        #expect(pending.count == 1)
        let command = try #require(pending.first)
        #expect(command.sequence == 1)
        #expect(command.operation == .upsert)
        #expect(command.collection == "todos" && command.entityID == milk.id.uuidString && command.partition == "2026-11-22")
        #expect(command.baseVersion == nil)
        #expect(command.id.hasSuffix("-00000000000000000001") && command.id.count > 21)
        let body = try JSONSerialization.jsonObject(with: #require(command.body)) as? [String: Any]
        #expect(body?["title"] as? String == "Buy milk")
        try await store.close()

        #expect(commandFiles(folder) == ["outbox/00000000000000000001.json"])
        let file = try folder.text("outbox/00000000000000000001.json")
        #expect(file.contains("\"operation\": \"upsert\"") && file.hasSuffix("}\n"))
        // The key's prefix is this folder instance's writer id (FORMAT.md, `.folio/writer.json`).
        let marker = try JSONSerialization.jsonObject(with: folder.bytes(".folio/writer.json")) as? [String: Any]
        #expect(command.id == "\(marker?["writer"] as? String ?? "?")-00000000000000000001")
    }

    @Test func commandsFollowTheOrderTheTransactionMadeTheChanges() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        var milk = todo("Buy milk", on: "2026-11-22")
        milk.tagID = "groceries"
        try await store.write { [milk] tx in
            // The todo first, then the tag it refers to: "tags.json" sorts before "todos/", but
            // the commands keep the order of the block.
            try tx.upsert(milk)
            try tx.upsert(Tag(id: "groceries", name: "Groceries", color: "#00AA00"))
            try tx.upsert(todo("Buy bread", on: "2026-11-01"))
        }
        #expect(try await store.pendingCommands().map(\.collection) == ["todos", "tags", "todos"])
        #expect(try await store.pendingCommands().first?.entityID == milk.id.uuidString)
        try await store.close()
    }

    @Test func numbersKeepIncreasingAcrossRestartsEvenWhenEverythingWasSent() async throws {
        let folder = TemporaryFolder()
        var store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "a", name: "A", color: "#000000")) }
        try await store.write { tx in try tx.upsert(Tag(id: "b", name: "B", color: "#000000")) }
        try await store.write { tx in try tx.delete(Tag.self, id: "a") }
        try await store.close()

        store = try await Store.open(at: folder.url, configuration: .testing())
        let pending = try await store.pendingCommands()
        #expect(pending.map(\.sequence) == [1, 2, 3])
        #expect(pending.map(\.operation) == [.upsert, .upsert, .delete])
        #expect(pending.map(\.entityID) == ["a", "b", "a"])
        for command in pending { try await store.acknowledgeCommand(command.sequence, serverVersion: "v\(command.sequence)") }
        #expect(try await store.pendingCommandCount() == 0)
        #expect(try await !store.hasPendingChanges())
        try await store.close()
        #expect(commandFiles(folder).isEmpty)
        #expect(commandFiles(folder, "outbox/sent").count == 3)

        store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "b", name: "B2", color: "#000000")) }
        let next = try await store.pendingCommands()
        #expect(next.map(\.sequence) == [4])
        #expect(next.first?.baseVersion == "v2", "the acknowledged version is the base of the next change")
        try await store.close()
    }

    @Test func coalescingCollapsesOfflineEditsOfOneEntity() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        var milk = todo("Buy milk", on: "2026-11-22")
        let bread = todo("Buy bread", on: "2026-11-22")
        try await store.write { [milk] tx in try tx.upsert(milk) }
        try await store.write { tx in try tx.upsert(bread) }
        for title in ["Buy oat milk", "Buy oat milk x2", "Buy oat milk x3"] {
            milk.title = title
            try await store.write { [milk] tx in try tx.upsert(milk) }
        }
        var pending = try await store.pendingCommands()
        // Bread's command stays where it was; milk's final state comes after it (never two
        // commands of one entity out of order).
        #expect(pending.map(\.entityID) == [bread.id.uuidString, milk.id.uuidString])
        #expect(pending.last.flatMap { String(data: $0.body ?? Data(), encoding: .utf8) }?.contains("x3") == true)

        // Created and deleted before the server saw it: nothing to send at all.
        try await store.write { [milk] tx in try tx.delete(Todo.self, id: milk.id) }
        pending = try await store.pendingCommands()
        #expect(pending.map(\.entityID) == [bread.id.uuidString])

        // Once the server has seen it, a delete is sent (and replaces a pending update).
        try await store.acknowledgeCommand(pending[0].sequence, serverVersion: "1")
        var edited = bread
        edited.done = true
        try await store.write { [edited] tx in try tx.upsert(edited) }
        try await store.write { tx in try tx.delete(Todo.self, id: bread.id) }
        pending = try await store.pendingCommands()
        #expect(pending.map(\.operation) == [.delete])
        #expect(pending.first?.baseVersion == "1")
        try await store.close()
    }

    @Test func coalescingNeverTouchesACommandInFlight() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        var milk = todo("Buy milk", on: "2026-11-22")
        try await store.write { [milk] tx in try tx.upsert(milk) }
        #expect(try await store.prepareToSend(try await store.pendingCommands()).map(\.sequence) == [1])
        milk.title = "Buy oat milk"
        try await store.write { [milk] tx in try tx.upsert(milk) }
        try await store.write { [milk] tx in try tx.delete(Todo.self, id: milk.id) }
        let pending = try await store.pendingCommands()
        // 1 is being sent: the update after it was replaced by the delete, nothing else moved.
        #expect(pending.map(\.sequence) == [1, 3])
        #expect(pending.map(\.operation) == [.upsert, .delete])
        try await store.close()
    }

    @Test func collectionsWithoutCoalescingSendEveryChange() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        for name in ["Work", "Office", "Job"] {
            try await store.write { tx in try tx.upsert(Tag(id: "t", name: name, color: "#000000")) }
        }
        try await store.write { tx in try tx.upsert(Tag(id: "t", name: "Job", color: "#000000")) }   // no change: no command
        #expect(try await store.pendingCommands().count == 3)
        try await store.close()
    }

    @Test func failedCommandsCanBeRetriedInPlaceOrDropped() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        for id in ["a", "b", "c"] {
            try await store.write { tx in try tx.upsert(Tag(id: id, name: id, color: "#000000")) }
        }
        try await store.checkpoint()
        let original = try folder.bytes("outbox/00000000000000000002.json")
        try await store.failCommand(2, reason: FailureReason("the server refused the color", status: 422, details: ["body": "bad color"]))
        try await store.failCommand(3, reason: FailureReason("gone", status: 410))
        #expect(try await store.pendingCommands().map(\.sequence) == [1])
        let failed = try await store.failedCommands()
        #expect(failed.map(\.command.sequence) == [2, 3])
        #expect(failed.first?.reason == "the server refused the color" && failed.first?.status == 422)
        #expect(try await store.hasPendingChanges(Tag.self, id: "b"))
        try await store.checkpoint()
        #expect(try folder.bytes("outbox/failed/00000000000000000002.json") == original, "command files are never rewritten")
        #expect(try folder.text("outbox/failed/00000000000000000002.reason.json").contains("\"status\": 422"))
        #expect(!folder.exists("outbox/00000000000000000002.json"))

        // A later change of "b" queues behind; the retried command comes back before it.
        try await store.write { tx in try tx.upsert(Tag(id: "b", name: "b2", color: "#000000")) }
        try await store.retryFailedCommand(2)
        #expect(try await store.pendingCommands().map(\.sequence) == [1, 2, 4])
        try await store.dropFailedCommand(3)
        #expect(try await store.failedCommands().isEmpty)
        await expectFolioError(.invalidQuery) { try await store.dropFailedCommand(3) }
        try await store.close()
        #expect(
            commandFiles(folder) == [
                "outbox/00000000000000000001.json", "outbox/00000000000000000002.json",
                "outbox/00000000000000000004.json",
            ])
        #expect(try folder.bytes("outbox/00000000000000000002.json") == original)
        #expect(commandFiles(folder, "outbox/failed").isEmpty)
    }

    @Test func anUnreadableCommandIsQuarantinedNeverDeleted() async throws {
        let folder = TemporaryFolder()
        var store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "a", name: "A", color: "#000000")) }
        try await store.close()
        let broken = "{ \"sequence\": 5, \"operation\": \"upsert\", oops"
        try folder.write(broken, to: "outbox/00000000000000000005.json")

        let log = LogRecorder()
        store = try await Store.open(at: folder.url, configuration: .testing(log: log.handler))
        #expect(try await store.hasPendingChanges())
        let problems = try await store.quarantinedCommands()
        #expect(problems.map(\.path) == ["outbox/00000000000000000005.json"])
        #expect(problems.first?.line == 1)
        #expect(try await store.pendingCommands().map(\.sequence) == [1])
        try await store.write { tx in try tx.upsert(Tag(id: "b", name: "B", color: "#000000")) }
        #expect(try await store.pendingCommands().map(\.sequence) == [1, 6], "numbers never reuse the broken file's")
        try await store.close()
        #expect(try folder.text("outbox/quarantine/00000000000000000005.json") == broken)
        #expect(!folder.exists("outbox/00000000000000000005.json"))

        store = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await store.quarantinedCommands().count == 1, "still reported after a restart")
        try await store.close()
    }

    @Test func customCommandsAreQueuedWithTheTransaction() async throws {
        struct MarkDone: Codable, Sendable { var date: String }
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        try await store.write { tx in
            try tx.upsert(milk)
            try tx.enqueue("markAllDone", payload: MarkDone(date: "2026-11-22"))
            try tx.enqueue("remind", payload: ["minutes": 5], about: Todo.self, id: milk.id)
        }
        let pending = try await store.pendingCommands()
        #expect(pending.map(\.operation) == [.upsert, .custom("markAllDone"), .custom("remind")])
        #expect(pending[1].body.map { String(decoding: $0, as: UTF8.self) } == #"{"date":"2026-11-22"}"#)
        #expect(pending[2].entityID == milk.id.uuidString)
        try await store.close()
    }
}

@Suite struct OutboxAttemptsTests {
    @Test func attemptsAreKeptOutsideTheCommandFiles() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "a", name: "A", color: "#000000")) }
        try await store.checkpoint()
        let command = try folder.bytes("outbox/00000000000000000001.json")
        let later = Date(timeIntervalSince1970: 1_800_000_000)
        try await store.recordFailedAttempt(1, error: "connection refused", nextAttempt: later, serverAnswered: false)
        let attempts = try await store.recordFailedAttempt(1, error: "503 Service Unavailable", nextAttempt: later)
        var expected = CommandAttempts(count: 2, serverErrors: 1, lastError: "503 Service Unavailable", nextAttempt: later)
        expected.serverAnsweredLast = true
        #expect(attempts == expected)
        #expect(try folder.bytes("outbox/00000000000000000001.json") == command)
        try await store.close()

        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.attempts(for: 1).count == 2)
        #expect(try await reopened.attempts(for: 9) == .none)
        try await reopened.acknowledgeCommand(1, serverVersion: nil)
        try await reopened.write { tx in try tx.upsert(Tag(id: "b", name: "B", color: "#000000")) }
        try await reopened.recordFailedAttempt(2, error: "timeout", nextAttempt: later)
        #expect(try await reopened.attempts(for: 1) == .none, "entries of sent commands are pruned")
        try await reopened.close()
    }
}
