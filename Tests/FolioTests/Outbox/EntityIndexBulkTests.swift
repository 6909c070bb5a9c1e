@testable import Folio
import Foundation
import Testing

/// A bulk import's first checkpoint brings the outbox's entity index up to date from its own
/// changes: it does not read back the thousands of command files it just wrote (it did, because a
/// new store had no index for the checkpoint to bring up to date, so it built one from the whole
/// outbox). A new store's journal starts with an empty index when its outbox is empty.
@Suite struct EntityIndexBulkTests {
    /// Counts whole-file reads of command files.
    final class CommandReads: @unchecked Sendable {
        private let lock = NSLock()
        private var paths: [String] = []
        var count: Int { lock.withLock { paths.count } }
        var first: [String] { lock.withLock { Array(paths.prefix(3)) } }
        var hook: IOHook {
            { step in
                if case .read(let path) = step, path.hasPrefix(OutboxBook.folder + "/") { self.lock.withLock { self.paths.append(path) } }
            }
        }
    }

    @Test("a bulk import's checkpoint reads none of the command files it wrote, and the index answers")
    func bulkImportReadsNoCommandBack() async throws {
        let folder = TemporaryFolder()
        let reads = CommandReads()
        var configuration = Store.Configuration.testing()
        configuration.ioHook = reads.hook
        let store = try await Store.open(at: folder.url, configuration: configuration)
        // Tags are pushed without coalescing: no commit reads the outbox.
        let ids = (0..<2_000).map { "t-\($0)" }
        try await store.write { tx in
            for id in ids { try tx.upsert(Tag(id: id, name: "Tag \(id)", color: "blue")) }
        }
        try await store.checkpoint()
        #expect(reads.count == 0, "\(reads.count) command files read back, first \(reads.first)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.file(OutboxBook.folder).path).filter { $0.hasSuffix(".json") }
        #expect(files.count == 2_000)
        try await store.close()

        // A fresh store answers from the index the checkpoint saved.
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.syncStatus(of: Tag.self, id: ids[1_234]) == .pending(commands: 1))
        #expect(try await reopened.pendingCommandCount() == 2_000)
        try await reopened.close()
        let index = try String(contentsOf: folder.file(OutboxEntityIndex.path), encoding: .utf8)
        #expect(index.split(separator: "\n").count == 2_001, "a header and a line per command")
    }
}
