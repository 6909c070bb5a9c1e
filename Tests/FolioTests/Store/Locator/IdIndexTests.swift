@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The id index alone (Store/Locator/IdIndex.swift), without files: it follows the journal's
/// changes so that a built collection's index always names the partition that holds each id.
/// The expectation is the truth itself (which day holds which id, as FORMAT.md's records say:
/// an entity lives in exactly one partition; a move removes it from one and sets it in another,
/// in either order within a record), not a copy of the index's bookkeeping.
@Suite struct IdIndexTests {
    private static let days = (10...13).map { PartitionKey.day(parsing: "2026-11-\($0)")! }

    private static func address(_ collection: String, _ key: PartitionKey) -> PartitionAddress {
        PartitionAddress(collection: collection, granularity: .day, key: key)
    }

    /// Random creates, moves (set first or remove first), deletes, rebuilds and forgets over two
    /// collections, 500 steps from a seed: after each, a built collection's index gives every
    /// id's true partition and none for a deleted id; one never built gives none.
    @Test func aBuiltIndexFollowsCreatesMovesAndDeletes() {
        let seed = ProcessInfo.processInfo.environment["FOLIO_INDEX_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let collections = ["notes", "todos"]
        let ids = (0..<8).map { "id\($0)" }
        let index = IdIndex()
        var truth: [String: [String: PartitionKey]] = [:]   // collection → id → day
        var counts = (creates: 0, moves: 0, deletes: 0, builds: 0, forgets: 0, saves: 0)
        for step in 0..<500 {
            let collection = collections[Int(random.next() % 2)]
            let id = ids[Int(random.next() % UInt64(ids.count))]
            let day = Self.days[Int(random.next() % UInt64(Self.days.count))]
            switch random.next() % 10 {
            case 0:
                // A build: what the store found reading every file.
                index.beginBuilding(collection)
                index.setBuilt(collection, from: Self.table(truth[collection] ?? [:]))
                counts.builds += 1
            case 1:
                index.forgetLocations()
                counts.forgets += 1
            case 2:
                // A save: what the index lists by partition is written, and is the next save's start.
                if let ids = index.idsByPartition(in: collection) {
                    let changed = index.changedPartitions(in: collection)
                    index.markSaved(
                        collection, changedPartitions: Self.resolved(ids).filter { changed.contains($0.key) }.mapValues { Array($0) }, identities: [:])
                    counts.saves += 1
                }
            default:
                if let current = truth[collection]?[id] {
                    if random.next() % 3 == 0 {
                        index.apply(id, at: Self.address(collection, current), exists: false)
                        truth[collection]![id] = nil
                        counts.deletes += 1
                    } else if current != day {
                        let setFirst = random.next() % 2 == 0
                        if setFirst { index.apply(id, at: Self.address(collection, day), exists: true) }
                        index.apply(id, at: Self.address(collection, current), exists: false)
                        if !setFirst { index.apply(id, at: Self.address(collection, day), exists: true) }
                        truth[collection]![id] = day
                        counts.moves += 1
                    } else {
                        index.apply(id, at: Self.address(collection, day), exists: true)
                    }
                } else {
                    index.apply(id, at: Self.address(collection, day), exists: true)
                    truth[collection, default: [:]][id] = day
                    counts.creates += 1
                }
                if index.isBuilt(collection) {
                    #expect(index.changed.contains(collection), "seed \(seed), step \(step): a change to a built index is to save")
                }
            }
            let wrong = collections.flatMap { name in ids.map { (name, $0) } }.first { name, id in
                index.key(of: id, in: name) != (index.isBuilt(name) ? truth[name]?[id] : nil)
            }
            // What a save would write: each partition's ids, those of the partitions that
            // changed since the last save gathered again, the others as that save wrote them.
            for name in collections where index.isBuilt(name) {
                let listed = Self.resolved(index.idsByPartition(in: name) ?? [:])
                let expected = Self.grouped(truth[name] ?? [:])
                if listed != expected.mapValues(Set.init) || expected.contains(where: { index.ids(at: $0.key, in: name).map(Set.init) != Set($0.value) }) {
                    Issue.record("seed \(seed), step \(step): \(name) would be saved as \(listed), expected \(expected)")
                }
            }
            if let (name, id) = wrong {
                let expected = index.isBuilt(name) ? truth[name]?[id] : nil
                Issue.record(
                    "seed \(seed), step \(step): \(name)/\(id) is at \(String(describing: index.key(of: id, in: name))), expected \(String(describing: expected))"
                )
                break
            }
        }
        print(
            "IdIndexTests seed \(seed): \(counts.creates) creates, \(counts.moves) moves, \(counts.deletes) deletes, "
                + "\(counts.builds) builds, \(counts.saves) saves, \(counts.forgets) forgets, every id where the model put it")
    }

    /// The table of a saved index's entries (SavedIDTable.swift), from a seed: every id listed
    /// once is found in its partition, an id listed nowhere is not, and the ids listed more than
    /// once (in two entries, or twice in one) are reported with every entry that lists them.
    /// Ids of every length, with bytes beyond ASCII, sharing prefixes.
    @Test func aSavedTableFindsEachIdListedOnceAndReportsTheOthers() throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_INDEX_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let days = (1...28).map { PartitionKey.day(parsing: String(format: "2026-02-%02d", $0))! }
        let pool = (0..<400).map { number in
            ["t\(number)", "todo-\(number)-é", String(repeating: "x", count: Int(random.next() % 60) + 1) + "\(number)", "😀\(number)"][number % 4]
        }
        var listed: [PartitionKey: [String]] = [:]
        var lists: [String: [PartitionKey]] = [:]
        for id in pool.prefix(360) {
            let copies = random.next() % 10 == 0 ? 2 + Int(random.next() % 2) : 1
            for _ in 0..<copies {
                let day = days[Int(random.next() % UInt64(days.count))]
                listed[day, default: []].append(id)
                lists[id, default: []].append(day)
            }
        }
        var text = IndexFile.header + "\n"
        for key in listed.keys.sorted() { text += "P \(key.text) 1 2 3 -4 5 \(listed[key]!.count)\n" + listed[key]!.map { $0 + "\n" }.joined() }
        let bytes = Array(text.utf8)
        var entries: [(key: PartitionKey, ids: [Range<Int>])] = []
        #expect(bytes.withUnsafeBufferPointer { IndexFile.walk($0) { entries.append(($0.key, $1)) } })
        let (table, twice) = try #require(SavedIDTable.build(bytes: bytes, entries: entries))
        let expectedTwice = lists.filter { $0.value.count > 1 }
        #expect(twice.mapValues { $0.sorted() } == expectedTwice.mapValues { $0.sorted() }, "seed \(seed)")
        for (id, days) in lists where days.count == 1 { #expect(table.key(of: id) == days[0], "seed \(seed): \(id)") }
        for id in pool.suffix(40) { #expect(table.key(of: id) == nil, "seed \(seed): \(id) is listed nowhere") }
        for key in days { #expect(table.ids(at: key) == (listed[key] ?? []) && table.count(at: key) == (listed[key]?.count ?? 0)) }
        var lines: [UInt8] = []
        for key in listed.keys.sorted() { table.appendLines(at: key, to: &lines) }
        #expect(lines == Array(listed.keys.sorted().flatMap { listed[$0]! }.map { $0 + "\n" }.joined().utf8))
        print("IdIndexTests table seed \(seed): \(lists.count) ids in \(listed.count) entries, \(twice.count) listed more than once, each found as listed")
    }

    /// Ids by partition, as a saved index lists them.
    private static func grouped(_ locations: [String: PartitionKey]) -> [PartitionKey: [String]] {
        locations.reduce(into: [:]) { result, location in result[location.value, default: []].append(location.key) }
    }

    /// The table a build makes of a saved index that lists `locations` (nil for none).
    private static func table(_ locations: [String: PartitionKey]) -> SavedIDTable? {
        let grouped = grouped(locations)
        var text = IndexFile.header + "\n"
        for key in grouped.keys.sorted() { text += "P \(key.text) 1 2 3 4 5 \(grouped[key]!.count)\n" + grouped[key]!.map { $0 + "\n" }.joined() }
        let bytes = Array(text.utf8)
        var entries: [(key: PartitionKey, ids: [Range<Int>])] = []
        let whole = bytes.withUnsafeBufferPointer { IndexFile.walk($0) { entries.append(($0.key, $1)) } }
        #expect(whole)
        return entries.isEmpty ? nil : SavedIDTable.build(bytes: bytes, entries: entries)?.table
    }

    /// What a save would write, as sets of ids.
    private static func resolved(_ ids: [PartitionKey: IndexFile.IDs]) -> [PartitionKey: Set<String>] {
        ids.reduce(into: [:]) { result, entry in
            switch entry.value {
            case .listed(let ids): result[entry.key] = Set(ids)
            case .lines(let table): result[entry.key] = Set(table.ids(at: entry.key))
            }
        }
    }

    @Test func anIndexWithAnUnreadableFileOrAnIdInTwoFilesIsNotSaved() {
        let index = IdIndex()
        let broken = Self.address("todos", Self.days[0])
        #expect(!index.isSavable("todos"), "not built")
        index.beginBuilding("todos")
        index.setBuilt("todos", from: Self.table(["a": Self.days[1]]))
        #expect(index.isSavable("todos"))

        let error = FolioError(.corruptFile, "does not parse", path: broken.path)
        #expect(index.noteUnreadable(broken, error), "news the first time")
        #expect(!index.noteUnreadable(broken, error), "known the second time")
        #expect(index.unreadableFiles(in: "todos")[broken] != nil && index.allUnreadableFiles.count == 1)
        #expect(!index.isSavable("todos"))
        index.noteReadable(broken)
        #expect(index.isSavable("todos"))

        index.setCopies([Self.days[1], Self.days[2]], of: "a", in: "todos")
        #expect(!index.isSavable("todos"))
        index.forgetLocations()
        #expect(!index.isBuilt("todos") && index.key(of: "a", in: "todos") == nil)
        #expect(index.copies(of: "a", in: "todos") == [Self.days[1], Self.days[2]], "an id in two files stays known")
        index.setCopies(nil, of: "a", in: "todos")
        #expect(index.copies(in: "todos")?.isEmpty == true)

        index.markChanged("todos")
        index.markSaved("todos", changedPartitions: [:], identities: [:])
        #expect(index.changed.isEmpty)
    }

    @Test func identitiesAreRememberedUntilTheNextBuildOrForget() {
        let index = IdIndex()
        let identity = FileIdentity(device: 1, inode: 2, size: 3, modified: 4, changed: 5, isDirectory: false)
        index.remember(identity, of: Self.days[0], in: "todos")
        #expect(index.identity(of: Self.days[0], in: "todos") == identity)
        index.beginBuilding("todos")
        #expect(index.identity(of: Self.days[0], in: "todos") == nil)
        index.remember(identity, of: Self.days[0], in: "todos")
        index.forgetLocations()
        #expect(index.identity(of: Self.days[0], in: "todos") == nil)
    }
}
