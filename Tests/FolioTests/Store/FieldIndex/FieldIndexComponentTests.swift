@testable import Folio
import Foundation
import Testing

/// The field index component alone (Store/FieldIndex/FieldIndex.swift), without a store: a query's
/// update loads what the saved index holds, what the query found waits in the component until the
/// store's own step saves it, never earlier, and a read-only store keeps nothing to save.
@Suite struct FieldIndexComponentTests {
    static let collection = "todos"

    /// A day file of `ids` written now, with its field index entry as a query would make it.
    static func dayFile(_ day: String, ids: [String], in fileSystem: FileSystem) throws -> (PartitionAddress, FieldIndexFile.Record) {
        let key = try #require(PartitionKey.day(parsing: day))
        let address = PartitionAddress(collection: collection, granularity: .day, key: key)
        let entities = ids.map { #""\#($0)":{"id":"\#($0)","title":"Milk \#($0)","done":false}"# }.joined(separator: ",")
        let bytes = Array(#"{"entities":{\#(entities)}}"#.utf8)
        let url = URL(fileURLWithPath: fileSystem.root).appendingPathComponent(address.path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        let identity = try #require(try fileSystem.identity(address.path))
        let columns = try #require(FieldScanner.columns(bytes), "the file takes apart by field")
        return (address, FieldIndexFile.Record(identity: identity, columns: columns))
    }

    static func made(_ entry: FieldIndexFile.Record) -> Result<Prefetched<Todo>, FolioError> {
        .success(Prefetched(file: nil, indexEntry: entry))
    }

    static func saved(_ fileSystem: FileSystem) -> [PartitionKey: FieldIndexFile.Record] {
        FieldIndexFile.read(fileSystem, collection: collection, fields: nil).entries
    }

    @Test func aQuerysChangesWaitUntilTheStoreSavesThem() throws {
        let folder = TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent(".folio/tmp"), withIntermediateDirectories: true)
        let fileSystem = FileSystem(root: folder.url.path)
        let (first, firstEntry) = try Self.dayFile("2025-03-01", ids: ["a", "b"], in: fileSystem)
        let (second, secondEntry) = try Self.dayFile("2025-03-02", ids: ["c"], in: fileSystem)
        let (third, thirdEntry) = try Self.dayFile("2025-03-03", ids: ["d"], in: fileSystem)
        let index = FieldIndex(fileSystem: fileSystem, isReadOnly: false)

        // A first query: no index yet; it makes an entry of each file it read.
        var update = index.update(for: Self.collection)
        update.load(fields: ["title"])
        #expect(update.isLoaded && update.entries.isEmpty)
        update.note(first.key, Self.made(firstEntry))
        update.note(second.key, Self.made(secondEntry))
        update.note(third.key, Self.made(thirdEntry))
        index.finish(update, scanned: [first, second, third])
        #expect(index.hasUnsavedChanges)
        #expect(
            !FileManager.default.fileExists(atPath: folder.url.appendingPathComponent(FieldIndexFile.path(Self.collection)).path),
            "a query never writes the index")

        #expect(index.saveUnsaved().isEmpty)
        #expect(!index.hasUnsavedChanges)
        #expect(Set(Self.saved(fileSystem).keys) == [first.key, second.key, third.key])

        // A second query loads the saved entries with its columns only, then the others (the
        // files' columns hold their entities whole, so its matches can be built from them); the first file read
        // without an entry (changed) makes its entry stale; the second, within the span of days
        // the query listed, is no longer among them (its file was deleted).
        update = index.update(for: Self.collection)
        update.load(fields: ["done"])
        #expect(update.entries[first.key]?.identity == firstEntry.identity)
        #expect(update.entries[first.key]?.fields.keys.sorted() == ["done"])
        #expect(update.entries[first.key]?.holdsEntities == false && update.otherColumnsBytes > 0)
        update.loadOtherColumns()
        #expect(update.entries[first.key]?.fields.keys.sorted() == ["done", "id", "title"])
        #expect(update.entries[first.key]?.holdsEntities == true && update.otherColumnsBytes == 0)
        #expect(update.idsAreUnique)
        update.note(first.key, Result<Prefetched<Todo>, FolioError>.success(Prefetched(file: nil)))
        index.finish(update, scanned: [first, third])
        #expect(Set(Self.saved(fileSystem).keys) == [first.key, second.key, third.key], "still nothing written before the store saves")
        #expect(index.saveUnsaved().isEmpty)
        let entries = Self.saved(fileSystem)
        #expect(Set(entries.keys) == [third.key], "the stale entry and the one of a file no longer listed in the span are dropped")
        #expect(entries[third.key]?.fields.keys.sorted() == ["done", "id", "title"], "saved entries keep every column")

        // A query that changed nothing leaves nothing to save.
        update = index.update(for: Self.collection)
        update.load(fields: ["title"])
        index.finish(update, scanned: [third])
        #expect(!index.hasUnsavedChanges)
    }

    @Test func aReadOnlyStoresQueriesLeaveNothingToSave() throws {
        let folder = TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent(".folio/tmp"), withIntermediateDirectories: true)
        let fileSystem = FileSystem(root: folder.url.path)
        let (first, firstEntry) = try Self.dayFile("2025-03-01", ids: ["a"], in: fileSystem)
        let index = FieldIndex(fileSystem: fileSystem, isReadOnly: true)
        var update = index.update(for: Self.collection)
        update.load(fields: ["title"])
        update.note(first.key, Self.made(firstEntry))
        index.finish(update, scanned: [first])
        #expect(!index.hasUnsavedChanges)
        #expect(index.saveUnsaved().isEmpty)
        #expect(Self.saved(fileSystem).isEmpty)
    }
}
