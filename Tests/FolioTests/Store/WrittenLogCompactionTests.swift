@testable import Folio
import Foundation
import Testing

/// `.folio/written` is rewritten with one line per file once it passes 4 MiB. A store of many
/// files (tens of thousands of pending commands) has a rewritten log past 4 MiB itself: it must
/// not be rewritten at every checkpoint (megabytes written per checkpoint, growing with what is
/// stored), only once its lines doubled (FORMAT.md, "`.folio/written`", the `K` line).
@Suite struct WrittenLogCompactionTests {
    @Test func aLogOfManyFilesIsRewrittenOnlyOnceItsLinesDoubled() async throws {
        let folder = TemporaryFolder()
        var store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(todo("First", on: "2026-11-01")) }
        try await store.close()

        // The lines of 90,000 files (as a long outbox leaves): past 4 MiB, and still past it
        // once rewritten with one line per file.
        let hash = ContentHash(Array("a command".utf8))
        var lines = ""
        for number in 1...90_000 { lines += "W 1 \(hash) outbox/sent/\(CommandFileName.name(UInt64(number)))\n" }
        let handle = try FileHandle(forWritingTo: folder.file(".folio/written"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(lines.utf8))
        try handle.close()
        #expect(try folder.bytes(".folio/written").count > Int(WrittenLog.compactionSize))

        func logIdentity() throws -> UInt64 {
            try #require(FileManager.default.attributesOfItem(atPath: folder.file(".folio/written").path)[.systemFileNumber] as? UInt64)
        }
        store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(todo("Second", on: "2026-11-02")) }
        try await store.checkpoint()
        let rewritten = try logIdentity()
        let compacted = try WrittenLog(fileSystem: FileSystem(root: folder.url.path)).head()?.compactedSize
        #expect(compacted.map { $0 > WrittenLog.compactionSize } == true, "the rewritten log names its size: \(String(describing: compacted))")

        for day in 3...12 {
            try await store.write { tx in try tx.upsert(todo("Day \(day)", on: String(format: "2026-11-%02d", day))) }
            try await store.checkpoint()
        }
        #expect(try logIdentity() == rewritten, "a checkpoint rewrote a log whose lines had not doubled")
        try await store.close()
        #expect(try await Store.verify(at: folder.url).problems.filter { $0.severity >= .warning }.isEmpty)
    }
}
