@testable import Folio
import Foundation
import Testing

/// A torn tail is normal after a crash; damage followed by valid records is not: the store
/// refuses to open and names the offset, keeps the journal and a copy, verify fails, and recover
/// salvages the transactions that validate.
@Suite struct JournalDamageTests {
    static let a = todo("A", on: "2026-11-20"), b = todo("B", on: "2026-11-21"), c = todo("C", on: "2026-11-22")

    static func record(_ number: UInt64, _ todo: Todo) throws -> JournalRecord {
        JournalRecord(
            transaction: number,
            changes: [
                JournalRecord.Change(
                    address: PartitionAddress(collection: "todos", granularity: .day, key: try PartitionKey.validDay(todo.date)),
                    id: todo.id.uuidString, entity: try EntityCoder().encode(todo))
            ])
    }

    /// A header and three records (A, B, C); returns the bytes and each record's offset.
    static func journal() throws -> (bytes: [UInt8], offsets: [Int]) {
        var bytes = Journal.encode(Journal.Header(generation: 42, firstTransaction: 7, nextSequence: 1))
        var offsets: [Int] = []
        for (index, item) in [a, b, c].enumerated() {
            offsets.append(bytes.count)
            bytes += Journal.encode(try record(7 + UInt64(index), item), generation: 42)
        }
        return (bytes, offsets)
    }

    func folder(withJournal bytes: [UInt8]) throws -> TemporaryFolder {
        let folder = TemporaryFolder()
        try folder.write("{\n  \"format\": 1,\n  \"store\": \"damaged\"\n}\n", to: "folio.json")
        try folder.write("", to: ".folio/tmp/.keep")
        try Data(bytes).write(to: folder.file(".folio/journal"))
        return folder
    }

    func titles(_ folder: TemporaryFolder) async throws -> [String] {
        let store = try await Store.open(at: folder.url, configuration: .testing())
        defer { Task { try await store.close() } }
        return try await store.fetch(Query<Todo>(sortedBy: [SortDescriptor(\.title)])).map(\.title)
    }

    /// Open fails naming the offset, the journal is untouched, a copy is kept, verify fails.
    func expectRefused(_ folder: TemporaryFolder, mentioning offset: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = try folder.bytes(".folio/journal")
        let error = await expectFolioError(.corruptJournal, sourceLocation: sourceLocation) { try await Store.open(at: folder.url, configuration: .testing()) }
        #expect(error?.description.contains(offset) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.path == ".folio/journal", sourceLocation: sourceLocation)
        #expect(try folder.bytes(".folio/journal") == before, "the journal is kept as it is", sourceLocation: sourceLocation)
        let copies = try FileManager.default.contentsOfDirectory(atPath: folder.file(".folio/quarantine").path)
        #expect(copies.count == 1, sourceLocation: sourceLocation)
        let copy = try folder.bytes(".folio/quarantine/" + (copies.first ?? "none"))
        #expect(copy == before, sourceLocation: sourceLocation)
        // Opening again keeps no second copy.
        _ = try? await Store.open(at: folder.url, configuration: .testing())
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file(".folio/quarantine").path).count == 1, sourceLocation: sourceLocation)
        let report = try await Store.verify(at: folder.url)
        #expect(!report.isHealthy && report.errors.contains { $0.kind == .journal }, "\(report.problems.map(\.description))", sourceLocation: sourceLocation)
    }

    @Test func oneDamagedByteMidJournalIsRefusedThenSalvaged() async throws {
        let (bytes, offsets) = try Self.journal()
        for position in [offsets[1] + 2, offsets[1] + 9, offsets[1] + 20, offsets[2] - 1] {
            var damaged = bytes
            damaged[position] ^= 0x20
            let folder = try folder(withJournal: damaged)
            try await expectRefused(folder, mentioning: "byte \(offsets[1])")
            let report = try await Store.recover(at: folder.url)
            #expect(report.actions.contains { $0.kind == .salvagedJournal && $0.message.contains("2 transaction(s)") }, "\(report.actions)")
            #expect(report.remaining.isHealthy, "\(report.remaining.problems.map(\.description))")
            #expect(try await titles(folder) == ["A", "C"], "the records before and after the damage are kept")
        }
    }

    @Test func aDuplicatedOrSkippedRecordIsDamage() async throws {
        let (bytes, offsets) = try Self.journal()
        let duplicated = Array(bytes[..<offsets[2]]) + Array(bytes[offsets[1]..<offsets[2]]) + Array(bytes[offsets[2]...])
        try await expectRefused(try folder(withJournal: duplicated), mentioning: "byte \(offsets[2])")
        let skipped = bytes + Journal.encode(try Self.record(11, todo("D", on: "2026-11-23")), generation: 42)
        try await expectRefused(try folder(withJournal: skipped), mentioning: "byte \(bytes.count)")
    }

    @Test func aDamagedHeaderWithRecordsIsRefusedThenSalvaged() async throws {
        var (bytes, _) = try Self.journal()
        bytes[33] ^= 0x01   // the header's checksum
        let folder = try folder(withJournal: bytes)
        try await expectRefused(folder, mentioning: "header is damaged")
        _ = try await Store.recover(at: folder.url)
        #expect(try await titles(folder) == ["A", "B", "C"])
    }

    @Test func aLostSectorBeforeALaterRecordIsATornTail() async throws {
        // Records appended after the last sync, the first lost to a power cut (its sector reads
        // as zeros), the next one written: none was acknowledged, so none is applied.
        let big = todo(String(repeating: "x", count: 1200), on: "2026-11-21")
        var bytes = Journal.encode(Journal.Header(generation: 42, firstTransaction: 7, nextSequence: 1))
        bytes += Journal.encode(try Self.record(7, Self.a), generation: 42)
        let lostStart = bytes.count
        bytes += Journal.encode(try Self.record(8, big), generation: 42)
        let lostEnd = bytes.count
        bytes += Journal.encode(try Self.record(9, Self.c), generation: 42)
        let sector = (lostStart / 512 + 1) * 512
        for index in sector..<min(sector + 512, lostEnd) { bytes[index] = 0 }
        #expect(try await titles(try folder(withJournal: bytes)) == ["A"])
    }
}
