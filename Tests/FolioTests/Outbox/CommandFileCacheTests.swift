@testable import Folio
import Foundation
import Testing

/// The command files a store keeps once read (Outbox/CommandFileCache.swift): only for the
/// journal generation they were read in, a bounded number, and never in place of what the
/// records say since (another store on the folder acknowledging, checkpointing, failing).
@Suite struct CommandFileCacheTests {
    private static func command(_ sequence: UInt64) -> JSONValue {
        .object(["sequence": .number(String(sequence))])
    }

    @Test func keepsFilesForTheirGenerationOnly() {
        var cache = CommandFileCache()
        cache.keep(Self.command(1), at: "outbox/1", generation: 4)
        #expect(cache.command(at: "outbox/1", generation: 4) == Self.command(1))
        #expect(cache.command(at: "outbox/1", generation: 5) == nil, "another generation's files may have moved")
        #expect(cache.command(at: "outbox/1", generation: nil) == nil)
        cache.keep(Self.command(2), at: "outbox/2", generation: 5)
        #expect(cache.command(at: "outbox/1", generation: 4) == nil, "a new generation drops the old one's files")
        #expect(cache.command(at: "outbox/2", generation: 5) == Self.command(2))
        cache.keep(Self.command(3), at: "outbox/3", generation: nil)
        #expect(cache.command(at: "outbox/3", generation: nil) == nil, "without a journal nothing is kept")
        cache.forget()
        #expect(cache.command(at: "outbox/2", generation: 5) == nil)
    }

    @Test func keepsTheMostRecentFilesUpToItsCapacity() {
        var cache = CommandFileCache()
        let total = CommandFileCache.capacity * 3 + 7
        for sequence in 1...UInt64(total) {
            cache.keep(Self.command(sequence), at: "outbox/\(sequence)", generation: 1)
            // Read again: kept once, never counted twice.
            cache.keep(Self.command(sequence), at: "outbox/\(sequence)", generation: 1)
        }
        let kept = (1...UInt64(total)).filter { cache.command(at: "outbox/\($0)", generation: 1) != nil }
        #expect(kept == Array(UInt64(total - CommandFileCache.capacity + 1)...UInt64(total)))
    }

    /// Two stores on one folder (as two processes): one reads the head of the queue (and keeps the
    /// files), the other acknowledges, fails and checkpoints; the first never takes a command for
    /// pending that is not, and acknowledges nothing twice.
    @Test func anotherStoresAcknowledgementsAndCheckpointsWinOverKeptFiles() async throws {
        let folder = TemporaryFolder()
        let first = try await Store.open(at: folder.url, configuration: .testing())
        try await first.write { tx in
            for day in 1...4 { try tx.upsert(todo("todo \(day)", on: "2026-11-0\(day)")) }
        }
        try await first.checkpoint()
        var head = try await first.queueHead(limit: 10)
        #expect(head.commands.map(\.sequence) == [1, 2, 3, 4])
        // Read once more: every look at a command after the first is served from memory.
        head = try await first.queueHead(limit: 10)
        #expect(head.commands.map(\.sequence) == [1, 2, 3, 4])

        let second = try await Store.open(at: folder.url, configuration: .testing())
        try await second.acknowledgeCommand(1, serverVersion: "7")
        try await second.failCommand(2, reason: FailureReason("refused", status: 422))
        head = try await first.queueHead(limit: 10)
        #expect(head.commands.map(\.sequence) == [3, 4], "the other store's records count over the files read")
        #expect(head.pendingCount == 2)

        try await second.checkpoint()
        head = try await first.queueHead(limit: 10)
        #expect(head.commands.map(\.sequence) == [3, 4], "after the other's checkpoint the files are read again")
        await #expect(throws: FolioError.self) { try await first.acknowledgeCommand(1, serverVersion: "7") }
        try await first.acknowledgeCommand(3, serverVersion: "8")
        await #expect(throws: FolioError.self) { try await second.acknowledgeCommand(3, serverVersion: "8") }
        head = try await second.queueHead(limit: 10)
        #expect(head.commands.map(\.sequence) == [4])

        // This store's own checkpoint moves the files: what it kept is read anew.
        try await first.checkpoint()
        head = try await first.queueHead(limit: 10)
        #expect(head.commands.map(\.sequence) == [4])
        #expect(try await first.failedCommands().map(\.command.sequence) == [2])
        try await second.close()
        try await first.close()
    }
}
