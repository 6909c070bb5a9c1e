@testable import Folio
import Foundation
import Testing

/// A store opened read-only writes nothing, serves everything committed (the journal applied in
/// memory), and refuses writes with a clear error; a read-only mount is opened so by itself, and
/// `folio verify`, `status` and `backup` work there.
@Suite struct ReadOnlyTests {
    static func tag(_ id: String) -> Tag { Tag(id: id, name: id.capitalized, color: "#000000") }

    /// A closed store with two tags in its files and one more committed only in its journal.
    static func storeWithJournal(at url: URL) async throws {
        let store = try await Store.open(at: url, configuration: .testing())
        try await store.write { tx in
            try tx.upsert(tag("home"))
            try tx.upsert(tag("work"))
        }
        try await store.close()
        // One more committed transaction that no checkpoint applied: as a crash leaves it.
        let journal = url.appendingPathComponent(".folio/journal")
        let bytes = [UInt8](try Data(contentsOf: journal))
        let header = try #require(Journal.decodeHeader(bytes))
        let record = JournalRecord(
            transaction: header.firstTransaction,
            changes: [
                JournalRecord.Change(
                    address: PartitionAddress(collection: "tags", granularity: .none, key: .whole),
                    id: "late", entity: try EntityCoder().encode(tag("late")))
            ])
        try Data(bytes + Journal.encode(record, generation: header.generation)).write(to: journal)
    }

    @Test func aReadOnlyOpenWritesNothingAndReadsTheJournal() async throws {
        let folder = TemporaryFolder()
        try await Self.storeWithJournal(at: folder.url)
        // A copy without .folio/ at all: nothing may appear there either.
        try FileManager.default.removeItem(at: folder.file(".folio/lock"))
        try FileManager.default.removeItem(at: folder.file(".folio/tmp"))
        let before = try MaintenanceFixture.snapshot(folder.url)
        var configuration = Store.Configuration.testing()
        configuration.readOnly = true
        let store = try await Store.open(at: folder.url, configuration: configuration)
        #expect(store.isReadOnly)
        #expect(try await store.fetch(Query<Tag>()).map(\.id).sorted() == ["home", "late", "work"])
        let error = await expectFolioError(.readOnly) { try await store.write { tx in try tx.upsert(Self.tag("new")) } }
        #expect(error?.message.contains("read-only") == true)
        await expectFolioError(.readOnly) { try await store.checkpoint() }
        try await store.close()
        #expect(try MaintenanceFixture.snapshot(folder.url) == before, "a read-only open changed the folder")
    }

    #if os(Linux)
    @Test func aReadOnlyMountOpensReadOnlyAndTheToolsWorkThere() async throws {
        let disk = try SmallDisk(megabytes: 4)
        let url = disk.url.appendingPathComponent("store")
        try await Self.storeWithJournal(at: url)
        try disk.remount(readOnly: true)
        defer { try? disk.remount(readOnly: false) }

        let log = LogRecorder()
        let store = try await Store.open(at: url, configuration: .testing(log: log.handler))
        #expect(store.isReadOnly)
        #expect(log.messages.contains { $0.level == .warning && $0.text.contains("opened read-only") })
        #expect(try await store.fetch(Query<Tag>()).map(\.id).sorted() == ["home", "late", "work"])
        await expectFolioError(.readOnly) { try await store.write { tx in try tx.upsert(Self.tag("new")) } }
        try await store.close()

        let verify = try await FolioTool.run(["verify", url.path])
        #expect(verify.code == 0, "\(verify.output) \(verify.errors)")
        let status = try await FolioTool.run(["status", url.path])
        #expect(status.code == 0, "\(status.output) \(status.errors)")
        let copy = TemporaryFolder("copy")
        let backup = try await FolioTool.run(["backup", url.path, copy.url.path])
        #expect(backup.code == 0, "\(backup.output) \(backup.errors)")
        let restored = try await Store.open(at: copy.url, configuration: .testing())
        #expect(try await restored.fetch(Query<Tag>()).map(\.id).sorted() == ["home", "late", "work"])
        try await restored.close()
    }
    #endif
}
