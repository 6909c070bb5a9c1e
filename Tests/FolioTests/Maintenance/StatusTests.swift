@testable import Folio
import Foundation
import Testing

/// Issue 29: `Store.status(at:)`, `folio status` and `folio outbox list` show the queue the store
/// sends (the command files with the journal's records not yet checkpointed on top) without
/// reading every command file: its length, its head, the failed commands.
@Suite struct StatusTests {
    /// A store whose queue lives partly in files and partly in the journal, left open (so its
    /// records are not checkpointed): commands 1–60 in files (60 failed in `outbox/failed/`);
    /// in the journal, 1 and 3 acknowledged, 2 and 4 failed, 5 failed and retried, 6 failed and
    /// dropped, 61–70 enqueued.
    static func queueInFilesAndJournal(in folder: TemporaryFolder) async throws -> Store {
        let first = try await Store.open(at: folder.url, configuration: .testing())
        try await first.write { tx in
            for n in 1...60 { try tx.upsert(Tag(id: "t-\(n)", name: "Tag \(n)", color: "blue")) }
        }
        try await first.failCommand(60, reason: FailureReason("refused in a file", status: 422))
        try await first.close()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.acknowledgeCommand(1, serverVersion: "1")
        try await store.acknowledgeCommand(3, serverVersion: "1")
        for sequence: UInt64 in [2, 4, 5, 6] {
            try await store.failCommand(sequence, reason: FailureReason("refused in the journal", status: 409))
        }
        try await store.retryFailedCommand(5)
        try await store.dropFailedCommand(6)
        try await store.write { tx in
            for n in 61...70 { try tx.upsert(Tag(id: "t-\(n)", name: "Tag \(n)", color: "red")) }
        }
        return store
    }

    static let expectedPending: [UInt64] = [5] + Array(7...59) + Array(61...70)

    @Test("status counts the queue from command files and journal records, lists its head, and writes nothing")
    func countsFilesAndRecords() async throws {
        let folder = TemporaryFolder()
        let store = try await Self.queueInFilesAndJournal(in: folder)
        #expect(try await store.pendingCommands().map(\.sequence) == Self.expectedPending, "the store's own queue")
        #expect(try await store.failedCommands().map(\.command.sequence) == [2, 4, 60])
        let before = try MaintenanceFixture.snapshot(folder.url)

        let status = try await Store.status(at: folder.url)
        #expect(status.pendingCount == Self.expectedPending.count)
        #expect(status.pending.map(\.sequence) == Array(Self.expectedPending.prefix(StoreStatus.defaultPendingLimit)))
        #expect(status.failed.map(\.command.sequence) == [2, 4, 60])
        #expect(status.failed.map(\.status) == [409, 409, 422])
        #expect(status.collections.first { $0.name == "tags" }?.entities == 70)
        #expect(status.journal.pendingTransactions > 0, "the records are not checkpointed")
        #expect(status.verification == nil)
        #expect(status.commandText(61) == nil, "past the head")

        let all = try await Store.status(at: folder.url, pendingLimit: nil)
        #expect(all.pending.map(\.sequence) == Self.expectedPending)
        #expect(all.commandText(61) != nil)
        let verified = try await Store.status(at: folder.url, verify: true, pendingLimit: nil)
        #expect(verified.pending.map(\.sequence) == Self.expectedPending && verified.pendingCount == Self.expectedPending.count)
        #expect(verified.failed.map(\.command.sequence) == [2, 4, 60])
        #expect(verified.collections == status.collections)
        #expect(verified.verification?.isHealthy == true, "\(verified.verification?.problems ?? [])")
        #expect(try await Store.status(at: folder.url, pendingLimit: 1).pending.map(\.sequence) == [5])

        #expect(try MaintenanceFixture.snapshot(folder.url) == before, "status wrote something")
        try await store.close()
        let closed = try await Store.status(at: folder.url, pendingLimit: nil)
        #expect(closed.pending.map(\.sequence) == Self.expectedPending && closed.journal.pendingTransactions == 0, "the same queue, now in files")
    }

    @Test("folio outbox list shows the head and how many more, --all every command; folio status the count and the next command")
    func outboxListAndStatus() async throws {
        let folder = TemporaryFolder()
        let store = try await Self.queueInFilesAndJournal(in: folder)
        let path = folder.url.path
        let head = Self.expectedPending.prefix(StoreStatus.defaultPendingLimit)

        let text = try await FolioTool.run(["outbox", "list", path])
        #expect(text.code == 0, "\(text.errors)")
        #expect(text.output.contains("pending: \(Self.expectedPending.count)\n"), "\(text.output)")
        #expect(text.output.contains("  … and \(Self.expectedPending.count - head.count) more (--all lists every one)"), "\(text.output)")
        let listedLines = text.output.split(separator: "\n").filter { $0.hasPrefix("  ") && !$0.contains("more (--all") }
        #expect(listedLines.count == head.count + 3, "the head, then the failed commands")

        let json = try FolioTool.json(try await FolioTool.run(["outbox", "list", "--json", path]).output)
        #expect(json["pendingCount"] as? Int == Self.expectedPending.count)
        #expect((json["pending"] as? [[String: Any]])?.compactMap { $0["sequence"] as? Int } == head.map { Int($0) })
        #expect((json["failed"] as? [[String: Any]])?.compactMap { $0["sequence"] as? Int } == [2, 4, 60])

        let every = try FolioTool.json(try await FolioTool.run(["outbox", "list", "--all", "--json", path]).output)
        #expect((every["pending"] as? [[String: Any]])?.compactMap { $0["sequence"] as? Int } == Self.expectedPending.map { Int($0) })
        let everyText = try await FolioTool.run(["outbox", "list", "--all", path])
        #expect(!everyText.output.contains("more (--all"), "\(everyText.output)")
        #expect(everyText.output.contains("  70  "), "\(everyText.output)")

        let status = try await FolioTool.run(["status", path])
        #expect(status.output.contains("outbox: \(Self.expectedPending.count) pending, 3 failed"), "\(status.output)")
        #expect(status.output.contains("  next: 5  "), "\(status.output)")
        #expect(status.output.contains("not verified: run folio verify"), "\(status.output)")
        let verified = try await FolioTool.run(["status", "--verify", path])
        #expect(verified.output.contains("verify: "), "\(verified.output)")
        let statusJSON = try FolioTool.json(try await FolioTool.run(["status", "--json", path]).output)
        #expect((statusJSON["outbox"] as? [String: Any])?["pending"] as? Int == Self.expectedPending.count)
        #expect(((statusJSON["outbox"] as? [String: Any])?["next"] as? [String: Any])?["sequence"] as? Int == 5)
        #expect(statusJSON["verified"] as? Bool == false)
        try await store.close()
    }

    @Test("entity counts: a file edited by hand is counted from the file, the others from the id index")
    func countsFollowHandEdits() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        // A read by id saves the id index of todos at the next close.
        let store = try await Store.open(at: folder.url, configuration: .testing())
        _ = try await store.get(Todo.self, id: MaintenanceFixture.milk)
        try await store.close()
        #expect(try await Store.status(at: folder.url).collections.first { $0.name == "todos" }?.entities == 3)

        let path = "todos/2026-11/2026-11-22.json"
        let added = UUID().uuidString
        let edited = try folder.text(path).replacingOccurrences(
            of: "\"entities\": {",
            with: "\"entities\": {\n    \"\(added)\": {\"date\": \"2026-11-22\", \"done\": false, \"id\": \"\(added)\", \"title\": \"By hand\"},")
        try folder.write(edited, to: path)
        let status = try await Store.status(at: folder.url)
        #expect(status.collections.first { $0.name == "todos" }?.entities == 4)
        #expect(status.collections == (try await Store.status(at: folder.url, verify: true)).collections)
    }
}
