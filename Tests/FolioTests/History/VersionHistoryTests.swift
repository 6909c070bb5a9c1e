@testable import Folio
import Foundation
import Testing

/// The version history alone (Store/History/VersionHistory.swift), over real files in a temp folder
/// and the settings a stub gives (``HistoryContext``): a file Folio wrote is taken as it is, a save
/// made from an older revision is merged three ways with what Folio wrote since, and a save whose
/// base is unknown is merged without deleting anything (FORMAT.md, "Editing by hand").
@Suite struct VersionHistoryTests {
    final class Context: HistoryContext {
        var settings: StoreSettings = {
            var settings = StoreSettings(storeID: "store")
            settings.writerID = "w1"
            return settings
        }()
        var fileLoadsSoFar: Int { 0 }
    }

    static let path = "todos/2026-11/2026-11-22.json"

    static func entity(_ id: String, _ title: String) -> (String, JSONValue) {
        (id, .object(["id": .string(id), "title": .string(title)]))
    }

    /// Folio's revision `number` of the file with these entities, kept as Folio's version.
    static func folios(
        _ entities: [(String, JSONValue)], number: UInt64, after previous: PartitionFile.Contents?,
        history: VersionHistory
    ) -> PartitionFile.Contents {
        var contents = PartitionFile.Contents(entities: Dictionary(uniqueKeysWithValues: entities), extra: [:])
        contents.revision = Revision(writer: "w1", number: number, hash: contents.contentHash, ancestors: previous?.revision?.vector ?? [:])
        history.keep(PartitionFile.encode(contents), of: path, revision: contents.revision)
        return contents
    }

    /// A person's save: `base`'s bytes with the entities changed, its revision left as it was.
    static func save(of base: PartitionFile.Contents, _ entities: [(String, JSONValue)]) -> (PartitionFile.Contents, [UInt8]) {
        var saved = base
        saved.entities = Dictionary(uniqueKeysWithValues: entities)
        let bytes = PartitionFile.encode(saved)
        return (try! PartitionFile.decode(bytes, path: path), bytes)
    }

    @Test func aSaveIsTakenAsItIsOrMergedWithWhatFolioWroteSince() throws {
        let folder = TemporaryFolder()
        // What opening a store makes: the machinery's temp folder, where versions are written first.
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent(StoreLayout.tempFolder), withIntermediateDirectories: true)
        let context = Context()
        let history = VersionHistory(
            context: context, fileSystem: FileSystem(root: folder.url.path), log: nil, isReadOnly: false,
            writtenHashes: WrittenHashesCache())
        let first = Self.folios([Self.entity("a", "milk"), Self.entity("b", "bread")], number: 1, after: nil, history: history)
        let second = Self.folios(
            [Self.entity("a", "milk"), Self.entity("b", "bread"), Self.entity("c", "tea")], number: 2,
            after: first, history: history)

        // Folio's newest version, read back: taken as it is.
        let newestBytes = PartitionFile.encode(second)
        let asWritten = history.reconcile(try PartitionFile.decode(newestBytes, path: Self.path), bytes: newestBytes, path: Self.path)
        #expect(!asWritten.merged && asWritten.kept && asWritten.contents.entities == second.entities)

        // A save made from the newest revision: the file as it is.
        let (fromSecond, fromSecondBytes) = Self.save(of: second, [Self.entity("a", "milk"), Self.entity("c", "green tea")])
        let taken = history.reconcile(fromSecond, bytes: fromSecondBytes, path: Self.path)
        #expect(!taken.merged && taken.contents.entities == fromSecond.entities)

        // A save made from the first revision: a's title changed, b deleted. Folio added c since:
        // the merge keeps c, takes the save's change to a, and deletes b.
        let (fromFirst, fromFirstBytes) = Self.save(of: first, [Self.entity("a", "oat milk")])
        let merged = history.reconcile(fromFirst, bytes: fromFirstBytes, path: Self.path)
        #expect(merged.merged, "a save from an older revision is merged")
        #expect(
            merged.contents.entities == Dictionary(uniqueKeysWithValues: [Self.entity("a", "oat milk"), Self.entity("c", "tea")]),
            "\(merged.contents.entities.keys.sorted())")
        #expect(merged.folio?.entities == second.entities, "the edit's baseline is what Folio last wrote")

        // A file naming no revision Folio keeps: merged without a base with Folio's newest version
        // (the merge just made, kept as Folio's), deleting nothing of it.
        var foreign = PartitionFile.Contents(entities: Dictionary(uniqueKeysWithValues: [Self.entity("d", "eggs")]), extra: [:])
        foreign.revision = nil
        let foreignBytes = PartitionFile.encode(foreign)
        let unknown = history.reconcile(try PartitionFile.decode(foreignBytes, path: Self.path), bytes: foreignBytes, path: Self.path)
        #expect(unknown.merged)
        #expect(Set(unknown.contents.entities.keys) == ["a", "c", "d"], "\(unknown.contents.entities.keys.sorted())")
        #expect(history.mergeReports.reports.contains { $0.path == Self.path && $0.kind == .unknownBase })
    }
}
