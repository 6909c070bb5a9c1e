@testable import Folio
import Foundation
import Testing

/// A journal whose last record is cut short at every byte, or followed by garbage, never makes an
/// uncommitted transaction visible nor loses a committed one.
@Suite struct TornJournalTests {
    static let a = todo("A", on: "2026-11-20"), b = todo("B", on: "2026-11-21"), c = todo("C", on: "2026-11-22")

    /// Three records: insert A and B; insert C; then (multi-file) edit A, move B to C's day, delete C.
    func records() throws -> [JournalRecord] {
        let coder = EntityCoder()
        func change(_ todo: Todo, deleted: Bool = false, on day: String? = nil) throws -> JournalRecord.Change {
            var todo = todo
            if let day { todo.date = day }
            return JournalRecord.Change(
                address: PartitionAddress(collection: "todos", granularity: .day, key: try PartitionKey.validDay(todo.date)),
                id: todo.id.uuidString, entity: deleted ? nil : try coder.encode(todo))
        }
        var editedA = Self.a
        editedA.title = "A edited"
        return [
            JournalRecord(transaction: 7, changes: [try change(Self.a), try change(Self.b)]),
            JournalRecord(transaction: 8, changes: [try change(Self.c)]),
            JournalRecord(
                transaction: 9,
                changes: [
                    try change(editedA), try change(Self.b, deleted: true), try change(Self.b, on: "2026-11-22"),
                    try change(Self.c, deleted: true),
                ]),
        ]
    }

    func titles(afterOpening folder: TemporaryFolder) async throws -> [String] {
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let titles = try await store.fetch(Query<Todo>(sortedBy: [SortDescriptor(\.title)])).map { "\($0.title)@\($0.date)" }
        try await store.close()
        #expect(try folder.bytes(".folio/journal").count == Journal.headerSize, "recovery empties the journal")
        return titles
    }

    func folder(withJournal bytes: [UInt8]) throws -> TemporaryFolder {
        let folder = TemporaryFolder()
        try folder.write("{\n  \"format\": 1,\n  \"store\": \"torn\"\n}\n", to: "folio.json")
        try folder.write("", to: ".folio/tmp/.keep")
        try Data(bytes).write(to: folder.file(".folio/journal"))
        return folder
    }

    @Test func cuttingTheLastRecordAtEveryByte() async throws {
        let header = Journal.Header(generation: 42, firstTransaction: 7, nextSequence: 1)
        let records = try records()
        let firstTwo = Journal.encode(header) + Journal.encode(records[0], generation: 42) + Journal.encode(records[1], generation: 42)
        let last = Journal.encode(records[2], generation: 42)
        let committedTwo = ["A@2026-11-20", "B@2026-11-21", "C@2026-11-22"]
        let committedAll = ["A edited@2026-11-20", "B@2026-11-22"]

        #expect(try await titles(afterOpening: folder(withJournal: firstTwo + last)) == committedAll)
        // Every byte, at the level that decides what is committed: the record parser.
        for cut in 0..<last.count {
            let bytes = Array((firstTwo + Array(last[0..<cut]))[Journal.headerSize...])
            let read = try Journal.parseRecords(bytes, baseOffset: Int64(Journal.headerSize), generation: 42, expectedTransaction: 7)
            #expect(read.records == Array(records[0..<2]), "journal cut \(cut) bytes into the last record")
            // Zeros at the end of the cut (inside the record header's numbers) are free space.
            let nonZero = (last[0..<cut].lastIndex { $0 != 0 }).map { $0 + 1 } ?? 0
            #expect(read.discardedBytes == Int64(nonZero))
        }
        // And through a whole open and recovery, at the record header's every byte and then every
        // 16th (opening syncs files, so each open costs milliseconds).
        let shared = try folder(withJournal: [])
        for cut in Array(0..<Journal.recordHeaderSize) + Array(stride(from: Journal.recordHeaderSize, to: last.count, by: 16)) {
            if FileManager.default.fileExists(atPath: shared.file("todos").path) {
                try FileManager.default.removeItem(at: shared.file("todos"))
            }
            try Data(firstTwo + Array(last[0..<cut])).write(to: shared.file(".folio/journal"))
            let result = try await titles(afterOpening: shared)
            #expect(result == committedTwo, "journal cut \(cut) bytes into the last record")
        }
    }

    @Test func garbageAfterTheLastRecord() async throws {
        let header = Journal.Header(generation: 42, firstTransaction: 7, nextSequence: 1)
        let records = try records()
        let journal = Journal.encode(header) + records.flatMap { Journal.encode($0, generation: 42) }
        let committedAll = ["A edited@2026-11-20", "B@2026-11-22"]
        var generator = SystemRandomNumberGenerator()
        let tails: [[UInt8]] = [
            [UInt8](repeating: 0, count: 4096),
            (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) },
            // A well-formed record of the next transaction, but from another generation (left over
            // from before a reset): it must not validate.
            Journal.encode(JournalRecord(transaction: 10, changes: []), generation: 41),
        ]
        for tail in tails {
            #expect(try await titles(afterOpening: folder(withJournal: journal + tail)) == committedAll)
        }
        // Damage in the middle, or a record that skips a number, is not a torn tail:
        // JournalDamageTests.
    }

    @Test func aTornHeaderMeansAnEmptyJournal() async throws {
        let header = Journal.encode(Journal.Header(generation: 42, firstTransaction: 7, nextSequence: 1))
        for cut in [0, 5, Journal.headerSize - 1] {
            let log = LogRecorder()
            let folder = try folder(withJournal: Array(header[0..<cut]))
            let store = try await Store.open(at: folder.url, configuration: .testing(log: log.handler))
            #expect(try await store.fetch(Query<Todo>()).isEmpty)
            try await store.write { tx in try tx.upsert(Self.a) }
            try await store.close()
            #expect(try await titles(afterOpening: folder) == ["A@2026-11-20"])
        }
    }

    @Test func replayingTwiceGivesTheSameFiles() async throws {
        // A crash after the checkpoint wrote the files but before the journal was reset: the
        // records are replayed onto files that already hold them.
        let header = Journal.Header(generation: 42, firstTransaction: 7, nextSequence: 1)
        let journal = Journal.encode(header) + (try records()).flatMap { Journal.encode($0, generation: 42) }
        let folder = try folder(withJournal: journal)
        _ = try await titles(afterOpening: folder)
        let files = folder.allFiles().filter { $0.hasPrefix("todos/") }
        let contents = try files.map { try folder.bytes($0) }
        try Data(journal).write(to: folder.file(".folio/journal"))
        #expect(try await titles(afterOpening: folder) == ["A edited@2026-11-20", "B@2026-11-22"])
        #expect(folder.allFiles().filter { $0.hasPrefix("todos/") } == files)
        #expect(try files.map { try folder.bytes($0) } == contents)
    }
}
