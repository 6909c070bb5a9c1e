@testable import Folio
import Foundation
import Testing

@Suite struct FileFormatTests {
    @Test func filesArePrettySortedAndEndWithANewline() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "work", name: "Work \"quoted\"\n", color: "#FF8800")) }
        try await store.close()
        // The revision: this folder's writer id, the file's first revision, the content's hash.
        let writer = try #require(try JSONSerialization.jsonObject(with: folder.bytes(".folio/writer.json")) as? [String: Any])["writer"] as? String
        let text = try folder.text("tags.json")
        let hash = try #require(text.split(separator: "\n").last { $0.contains("\"revision\"") }?.split(separator: ":").last?.dropLast())
        #expect(
            text == """
                {
                  "entities": {
                    "work": {
                      "color": "#FF8800",
                      "id": "work",
                      "name": "Work \\"quoted\\"\\n"
                    }
                  },
                  "revision": "\(writer ?? ""):1:\(hash)"
                }

                """)
        // The hash is of the content without the revision (FORMAT.md, "Revisions").
        let bare = text.replacingOccurrences(of: ",\n  \"revision\": \"\(writer ?? ""):1:\(hash)\"\n}", with: "\n}")
        #expect(ContentHash(Array(bare.utf8)).description == String(hash))
        let marker = try JSONSerialization.jsonObject(with: folder.bytes("folio.json")) as? [String: Any]
        #expect(marker?["format"] as? Int == 1)
    }

    @Test func theSameContentAlwaysGivesTheSameBytes() async throws {
        let todos = (0..<20).map { index in
            Todo(id: UUID(), title: "Task \(index) — ünïcödé ✓", date: "2026-11-\(10 + index % 3)", priority: index)
        }
        // Two stores, the same todos written in opposite orders and in different transactions.
        let first = TemporaryFolder(), second = TemporaryFolder()
        let a = try await Store.open(at: first.url, configuration: .testing())
        try await a.write { tx in for todo in todos { try tx.upsert(todo) } }
        try await a.close()
        let b = try await Store.open(at: second.url, configuration: .testing())
        for todo in todos.reversed() { try await b.write { tx in try tx.upsert(todo) } }
        try await b.close()
        let files = first.allFiles().filter { $0.hasPrefix("todos/") }
        #expect(files.count == 3)
        #expect(second.allFiles().filter { $0.hasPrefix("todos/") } == files)
        // Byte for byte, but for the revision (each store is a writer of its own).
        func withoutRevision(_ folder: TemporaryFolder, _ file: String) throws -> String {
            try folder.text(file).split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("\"revision\": ") }.joined(separator: "\n")
        }
        for file in files { #expect(try withoutRevision(first, file) == withoutRevision(second, file), "\(file)") }

        // Rewriting the same content does not touch the files at all.
        let before = try files.map { try FileManager.default.attributesOfItem(atPath: first.file($0).path)[.systemFileNumber] as? Int }
        let again = try await Store.open(at: first.url, configuration: .testing())
        try await again.write { tx in for todo in todos { try tx.upsert(todo) } }
        try await again.close()
        let after = try files.map { try FileManager.default.attributesOfItem(atPath: first.file($0).path)[.systemFileNumber] as? Int }
        #expect(before == after)
        for file in files { #expect(try withoutRevision(first, file) == withoutRevision(second, file)) }
    }

    @Test func fieldsTheTypeDoesNotKnowSurviveARewrite() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        var milk = todo("Buy milk", on: "2026-11-22")
        milk.tagID = "groceries"
        try await store.write { [milk] tx in try tx.upsert(milk) }
        try await store.close()

        // A person (or a newer app version) adds fields by hand, one of them nested.
        let path = "todos/2026-11/2026-11-22.json"
        var text = try folder.text(path)
        text = text.replacingOccurrences(
            of: "\"title\": \"Buy milk\"",
            with: "\"note\": \"organic\",\n      \"location\": {\"aisle\": 7, \"exact\": 1.50},\n      \"title\": \"Buy milk\"")
        try folder.write(text, to: path)

        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        var edited = try #require(try await reopened.get(Todo.self, id: milk.id))
        edited.title = "Buy oat milk"
        edited.tagID = nil
        try await reopened.write { [edited] tx in try tx.upsert(edited) }
        try await reopened.close()

        let stored = try #require(try JSONSerialization.jsonObject(with: folder.bytes(path)) as? [String: Any])
        let entity = try #require((stored["entities"] as? [String: Any])?[milk.id.uuidString] as? [String: Any])
        #expect(entity["title"] as? String == "Buy oat milk")
        #expect(entity["note"] as? String == "organic")
        #expect((entity["location"] as? [String: Any])?["aisle"] as? Int == 7)
        #expect(try folder.text(path).contains("\"exact\": 1.50"), "numbers keep their text")
        #expect(entity["tagID"] == nil, "a field the type knows and cleared is removed")
    }

    @Test func aCorruptFileIsReportedAndNeverOverwritten() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22"), bread = todo("Buy bread", on: "2026-11-23")
        try await store.write { tx in
            try tx.upsert(milk)
            try tx.upsert(bread)
        }
        try await store.close()

        // Break line 4 by hand: drop the comma after the "createdAt" value.
        let path = "todos/2026-11/2026-11-22.json"
        var lines = try folder.text(path).components(separatedBy: "\n")
        #expect(lines[3].hasPrefix("      \"createdAt\""))
        lines[3].removeLast()
        try folder.write(lines.joined(separator: "\n"), to: path)
        let broken = try folder.bytes(path)

        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        let error = await expectFolioError(.corruptFile) { try await reopened.fetch(Query<Todo>(.day("2026-11-22"))) }
        #expect(error?.path == path)
        #expect(error?.line == 5)
        #expect(error?.column == 7)
        #expect(error.map { "\($0)" }?.hasPrefix("\(path):5:7: invalid JSON: expected ',' or '}'") == true)
        await expectFolioError(.corruptFile) { try await reopened.get(Todo.self, id: milk.id) }
        // A write to the broken day waits in the journal (FORMAT.md, "Editing by hand").
        let more = todo("More", on: "2026-11-22")
        try await reopened.write { tx in try tx.upsert(more) }

        // Other days keep working, for reads and writes.
        #expect(try await reopened.fetch(Query<Todo>(.day("2026-11-23"))) == [bread])
        let jam = todo("Buy jam", on: "2026-11-23")
        try await reopened.write { tx in try tx.upsert(jam) }
        await expectFolioError(.corruptFile) { try await reopened.checkpoint() }
        try await reopened.close()
        #expect(try folder.bytes(path) == broken)
        #expect(try folder.text("todos/2026-11/2026-11-23.json").contains("Buy jam"))

        // Fixed by hand: the waiting write lands on top of the fixed file.
        lines[3] += ","
        try folder.write(lines.joined(separator: "\n"), to: path)
        let fixed = try await Store.open(at: folder.url, configuration: .testing())
        #expect(Set(try await fixed.fetch(Query<Todo>(.day("2026-11-22"))).map(\.title)) == ["Buy milk", "More"])
        try await fixed.close()
    }

    @Test func aFileBrokenAfterReadingKeepsServingTheLastGoodState() async throws {
        let folder = TemporaryFolder()
        let log = LogRecorder()
        let store = try await Store.open(at: folder.url, configuration: .testing(log: log.handler))
        let milk = todo("Buy milk", on: "2026-11-22")
        try await store.write { tx in try tx.upsert(milk) }
        try await store.checkpoint()

        let path = "todos/2026-11/2026-11-22.json"
        let good = try folder.bytes(path)
        try folder.write("{ \"entities\": { oops", to: path)
        #expect(try await store.fetch(Query<Todo>(.day("2026-11-22"))) == [milk])
        #expect(log.messages.contains { $0.level == .error && $0.path == path && $0.text.contains("1:17") })

        // A change to that day waits in the journal: the broken file is not overwritten...
        let bread = todo("Buy bread", on: "2026-11-22")
        try await store.write { tx in try tx.upsert(bread) }
        await expectFolioError(.corruptFile) { try await store.checkpoint() }
        #expect(try folder.text(path) == "{ \"entities\": { oops")
        #expect(Set(try await store.fetch(Query<Todo>(.day("2026-11-22")))) == [milk, bread])

        // ...until the person fixes the file; then the change lands on top of their version.
        try folder.write(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "Buy milk", with: "Buy oat milk"), to: path)
        try await store.checkpoint()
        #expect(Set(try await store.fetch(Query<Todo>(.day("2026-11-22"))).map(\.title)) == ["Buy oat milk", "Buy bread"])
        // A fix that drops the revision (a file written afresh) has no known base: it deletes
        // nothing, and the merge is reported.
        try folder.write("{ \"entities\": {} }\n", to: path)
        #expect(Set(try await store.fetch(Query<Todo>(.day("2026-11-22"))).map(\.title)) == ["Buy oat milk", "Buy bread"])
        #expect(try await store.mergeReports().contains { $0.path == path && $0.kind == .unknownBase && $0.kept.count == 2 })
        try await store.close()
        #expect(try folder.text(path).contains("Buy bread"))
    }

    @Test(arguments: ["", ".", "..", "a/b", "..\\x", "x\u{0}y", "tab\there", String(repeating: "x", count: 257)])
    func hostileIDsAreRejected(id: String) async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        await expectFolioError(.invalidName) {
            try await store.write { tx in try tx.upsert(Tag(id: id, name: "x", color: "#000000")) }
        }
        await expectFolioError(.invalidName) { try await store.get(Tag.self, id: id) }
        try await store.close()
        #expect(folder.allFiles().filter { !$0.hasPrefix(".folio") } == ["folio.json"])
    }

    struct Hostile: Entity {
        static let collection = "../escape"
        static let partitioning = Partitioning<Hostile>.none
        var id: String
    }

    struct Reserved: Entity {
        static let collection = "outbox"
        static let partitioning = Partitioning<Reserved>.none
        var id: String
    }

    @Test func hostileCollectionNamesAndPartitionKeysAreRejected() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        await expectFolioError(.invalidName) { try await store.write { tx in try tx.upsert(Hostile(id: "a")) } }
        await expectFolioError(.invalidName) { try await store.write { tx in try tx.upsert(Reserved(id: "a")) } }
        for date in ["../../etc/passwd", "2026-02-30", "2026-13-01", "2026-11-22/..", "２０２６-11-22", ""] {
            await expectFolioError(.invalidName) { try await store.write { tx in try tx.upsert(todo("x", on: date)) } }
        }
        try await store.close()
        let outside = try FileManager.default.contentsOfDirectory(atPath: folder.url.deletingLastPathComponent().path)
        #expect(outside == ["store"])
        #expect(folder.allFiles().filter { !$0.hasPrefix(".folio") } == ["folio.json"])
    }

    @Test func leftoverTempFilesAreRemovedOnOpen() async throws {
        let folder = TemporaryFolder()
        try await Store.open(at: folder.url, configuration: .testing()).close()
        try folder.write("half a file", to: ".folio/tmp/4242-1-2026-11-22.json")
        try folder.write("another", to: ".folio/tmp/4242-2-tags.json")
        let log = LogRecorder()
        try await Store.open(at: folder.url, configuration: .testing(log: log.handler)).close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file(".folio/tmp").path).isEmpty)
        #expect(log.messages.filter { $0.text.contains("leftover temp file") }.count == 2)
    }

    @Test func aFolderThatIsNotAStoreIsRefused() async throws {
        let folder = TemporaryFolder()
        try folder.write("my thesis", to: "thesis.txt")
        await expectFolioError(.unsupportedFormat) { try await Store.open(at: folder.url) }
        #expect(folder.allFiles().filter { !$0.hasPrefix(".folio") } == ["thesis.txt"])

        let newer = TemporaryFolder()
        try newer.write("{\"format\": 99}\n", to: "folio.json")
        await expectFolioError(.unsupportedFormat) { try await Store.open(at: newer.url) }
    }

    @Test func aOneDayQueryReadsOnlyThatDayOfATenYearStore() async throws {
        let folder = TemporaryFolder()
        try folder.write("{\n  \"format\": 1,\n  \"store\": \"test\"\n}\n", to: "folio.json")
        var (year, month, day) = (2016, 11, 23)
        var keys: [String] = []
        for _ in 0..<3650 {
            let key = String(format: "%04d-%02d-%02d", year, month, day)
            keys.append(key)
            let folderURL = folder.file("todos/\(key.prefix(7))")
            if day == 1 || keys.count == 1 { try FileManager.default.createDirectory(at: folderURL, withIntermediateDirectories: true) }
            let id = UUID().uuidString
            try folder.writeQuickly(
                """
                {"entities": {"\(id)": {"id": "\(id)", "title": "On \(key)", "date": "\(key)", "done": false,
                "priority": 1, "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z"}}}
                """, to: "todos/\(key.prefix(7))/\(key).json")
            day += 1
            if day > PartitionKey.daysInMonth(year: year, month: month) {
                day = 1
                month += 1
                if month > 12 { month = 1; year += 1 }
            }
        }
        #expect(keys.last == "2026-11-20")
        // The first read-write open of a store another program wrote reads each file once, to
        // record what it holds (`.folio/written`, the copy check); every later open reads none.
        try await Store.open(at: folder.url).close()

        let reads = IORecorder()
        let store = try await Store.open(at: folder.url, configuration: .testing(hook: reads.hook))
        let opening = reads.reads
        #expect(!opening.contains { $0.hasPrefix("todos/") }, "open reads no partition: \(opening)")
        let result = try await store.fetch(Query<Todo>(.day("2026-11-20")))
        #expect(result.map(\.title) == ["On 2026-11-20"])
        #expect(reads.reads.filter { $0.hasPrefix("todos/") } == ["todos/2026-11/2026-11-20.json"])
        try await store.close()
    }
}

extension Todo: Hashable {
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

@Suite struct PartitionSchemaTests {
    /// A hand edit that parses but breaks the format (an entity that is not an object, a version
    /// that is not a string, a bad id) is located by line and column, by the store when it reads
    /// the file and by `verify`, from the one schema both use (PartitionFile.problems).
    @Test func shapeErrorsNameTheirLineAndColumnForTheStoreAndForVerify() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "home", name: "Home", color: "#0a0")) }
        try await store.close()
        try folder.write(
            """
            {
              "entities": {
                "home": {"color": "#0a0", "id": "home", "name": "Home"},
                "work": "not an object"
              },
              "versions": {
                "home": 7
              }
            }
            """, to: "tags.json")
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        let error = await expectFolioError(.corruptFile) { try await reopened.fetch(Query<Tag>()) }
        #expect(error?.path == "tags.json" && error?.line == 4 && error?.column == 5, "\(String(describing: error))")
        try await reopened.close()

        let report = try await Store.verify(at: folder.url)
        let located = report.problems.filter { $0.path == "tags.json" }.map { [$0.line, $0.column] }
        #expect(located == [[4, 5], [7, 5]], "\(report.problems)")
    }
}
