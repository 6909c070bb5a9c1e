@testable import Folio
import Foundation
import Testing

@Suite("folio verify")
struct VerifyTests {
    @Test("a store written through the API verifies without a single problem")
    func cleanStore() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let report = try await Store.verify(at: folder.url)
        #expect(report.problems.isEmpty, "\(report.problems.map(\.description))")
        #expect(report.entitiesChecked == 7)
        #expect(report.isHealthy)
    }

    @Test("broken JSON is reported with its file, line and column")
    func brokenJSON() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        try folder.write("{\n  \"entities\": {\n    \"A\": {\"id\": \"A\" \"x\": 1}\n  }\n}\n", to: "todos/2026-11/2026-11-22.json")
        let report = try await Store.verify(at: folder.url)
        let problem = expectProblem(report, .error, .invalidJSON, at: "todos/2026-11/2026-11-22.json", line: 3, column: 21)
        #expect(problem?.description.hasPrefix("todos/2026-11/2026-11-22.json:3:21: error: invalid JSON") == true)
        #expect(!report.isHealthy)
    }

    @Test("an id in two partition files of a collection is reported in both, at the id's line")
    func duplicateID() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let id = MaintenanceFixture.milk.uuidString
        let entity = "{\"date\": \"2026-10-01\", \"id\": \"\(id)\", \"title\": \"Buy milk\"}"
        try folder.write("{\n  \"entities\": {\n    \"\(id)\": \(entity)\n  }\n}\n", to: "todos/2026-10/2026-10-05.json")
        let report = try await Store.verify(at: folder.url)
        expectProblem(report, .error, .duplicateID, at: "todos/2026-10/2026-10-05.json", line: 3, column: 5)
        let original = try folder.text("todos/2026-11/2026-11-22.json").split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(original.firstIndex { $0.hasPrefix("    \"\(id)\"") }) + 1
        expectProblem(report, .error, .duplicateID, at: "todos/2026-11/2026-11-22.json", line: line, column: 5)
    }

    @Test("partition files in the wrong place and names that break the rules")
    func wrongPartitionAndBadNames() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let day = try folder.text("todos/2026-10/2026-10-01.json")
        try folder.write(day, to: "todos/2026-09/2026-10-01.json")
        try FileManager.default.removeItem(at: folder.file("todos/2026-10/2026-10-01.json"))
        try folder.write("{\"entities\": {}}\n", to: "todos/2026-02/2026-02-30.json")
        try folder.write("{\n  \"entities\": {\n    \"a/b\": {}\n  }\n}\n", to: "dailyStats/2026-12.json")
        try folder.write("{\"entities\": {}}\n", to: "my notes.json")
        let report = try await Store.verify(at: folder.url)
        expectProblem(report, .error, .wrongPartition, at: "todos/2026-09/2026-10-01.json")
        expectProblem(report, .error, .invalidName, at: "todos/2026-02/2026-02-30.json")
        expectProblem(report, .error, .invalidName, at: "dailyStats/2026-12.json", line: 3, column: 5)
        expectProblem(report, .error, .invalidName, at: "my notes.json")
    }

    @Test("outbox: a missing command is a gap (a note), a bad name and a wrong sequence are errors")
    func outboxNumbering() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.file("outbox").path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(names.count == 6, "\(names)")
        try FileManager.default.removeItem(at: folder.file("outbox/" + names[2]))
        var report = try await Store.verify(at: folder.url)
        let gap = expectProblem(report, .note, .outboxNumbering, at: "outbox/" + names[3])
        #expect(gap?.message.contains("missing before") == true)
        #expect(report.isHealthy)

        try FileManager.default.moveItem(at: folder.file("outbox/" + names[4]), to: folder.file("outbox/5.json"))
        let text = try folder.text("outbox/" + names[5]).replacingOccurrences(of: "\"sequence\": 6", with: "\"sequence\": 7")
        try folder.write(text, to: "outbox/" + names[5])
        report = try await Store.verify(at: folder.url)
        expectProblem(report, .error, .outboxNumbering, at: "outbox/5.json")
        let sequenceLine = text.split(separator: "\n").firstIndex { $0.contains("\"sequence\"") }! + 1
        expectProblem(report, .error, .outboxNumbering, at: "outbox/" + names[5], line: sequenceLine, column: 3)
    }

    @Test("a torn journal tail after the last commit is a note; pending transactions are notes")
    func tornJournal() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "late", name: "Late", color: "gray")) }
        // A record cut short where the records end (the zeros after them are free space).
        let journal = try folder.bytes(".folio/journal")
        let recordsEnd = (journal.lastIndex { $0 != 0 } ?? 0) + 1
        let handle = try FileHandle(forWritingTo: folder.file(".folio/journal"))
        try handle.seek(toOffset: UInt64(recordsEnd))
        try handle.write(contentsOf: Data([0x40, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7]))
        try handle.close()
        let report = try await Store.verify(at: folder.url)
        let journalNotes = report.problems.filter { $0.kind == .journal }
        #expect(journalNotes.count == 2, "\(journalNotes)")
        #expect(journalNotes.allSatisfy { $0.severity == .note && $0.path == ".folio/journal" })
        #expect(journalNotes.contains { $0.message.contains("11 bytes") })
        #expect(report.isHealthy)
        let status = try await Store.status(at: folder.url)
        #expect(status.collections.first { $0.name == "tags" }?.entities == 4)
        #expect(status.journal.pendingTransactions == 1)
        #expect(status.pending.count == 7)
        try await store.close()
    }

    @Test("conflict copies, rsync temps and editor files are warnings, not data")
    func strayFiles() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let tags = try folder.text("tags.json")
        let strays: [(String, StoreProblem.Kind)] = [
            ("tags.sync-conflict-20261122-101010-ABCDEFG.json", .conflictCopy),
            ("tags (Ann's conflicted copy 2026-11-22).json", .conflictCopy),
            ("tags (conflicted copy 2026-11-22 101010).json", .conflictCopy),   // Nextcloud, ownCloud
            ("todos/2026-11/2026-11-22 (conflict_on_2026-11-22).json", .conflictCopy),   // unison -copyonconflict
            (".unison.tags.json.5f3c.unison.tmp", .tempFile),
            ("todos/2026-11/2026-11-22 2.json", .conflictCopy),
            (".tags.json.Ab12Cd", .tempFile),
            ("tags.json~", .editorFile),
            (".tags.json.swp", .editorFile),
            ("outbox/00000000000000000001.sync-conflict-20261122-101010-ABCDEFG.json", .conflictCopy),
        ]
        for (path, _) in strays { try folder.write(tags, to: path) }
        try folder.write("x", to: ".folio/tmp/123-1-tags.json")
        let report = try await Store.verify(at: folder.url)
        for (path, kind) in strays { expectProblem(report, .warning, kind, at: path) }
        expectProblem(report, .warning, .tempFile, at: ".folio/tmp/123-1-tags.json")
        #expect(report.isHealthy, "strays are warnings: \(report.errors)")
        #expect(report.entitiesChecked == 7, "a copy is not read as data")
    }

    @Test("git's files in a store are notes, .folio keeps itself out of git, and a copy's writer id is noted")
    func gitFilesAndCopies() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.close()
        #expect(try folder.text(".folio/.gitignore").split(separator: "\n").contains("*"))
        for path in [".gitignore", ".gitattributes", "todos/.gitkeep"] { try folder.write("x\n", to: path) }
        var report = try await Store.verify(at: folder.url)
        #expect(report.problems.filter { $0.severity != .note }.isEmpty, "\(report.problems)")
        for path in [".gitignore", ".gitattributes", "todos/.gitkeep"] {
            #expect(report.problems.contains { $0.path == path && $0.severity == .note }, "\(path) is not noted as metadata")
        }
        #expect(!report.problems.contains { $0.path.hasPrefix(".folio/") }, "\(report.problems.filter { $0.path.hasPrefix(".folio/") })")

        // A copy's writer.json names another folder's lock: a note; the copy's first open makes its own.
        let copy = TemporaryFolder()
        try FileManager.default.createDirectory(at: copy.url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: folder.url, to: copy.url)
        try FileManager.default.removeItem(at: copy.file(".folio/lock"))
        try copy.write("", to: ".folio/lock")
        report = try await Store.verify(at: copy.url)
        #expect(report.problems.contains { $0.path == ".folio/writer.json" && $0.severity == .note })
        let before = try copy.text(".folio/writer.json")
        try await Store.open(at: copy.url, configuration: .testing()).close()
        #expect(try copy.text(".folio/writer.json") != before)
        report = try await Store.verify(at: copy.url)
        #expect(!report.problems.contains { $0.path == ".folio/writer.json" }, "\(report.problems)")
    }

    @Test("verify writes nothing: bytes and modification times stay, no lock file appears")
    func writesNothing() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(todo("Pending", on: "2026-11-23")) }
        try folder.write("{ broken", to: "todos/2026-11/2026-11-22.json")
        try folder.write("x", to: ".folio/tmp/1-1-tags.json")
        try FileManager.default.removeItem(at: folder.file(".folio/lock"))
        let before = try MaintenanceFixture.snapshot(folder.url)
        try await Task.sleep(for: .milliseconds(20))
        let report = try await Store.verify(at: folder.url)
        _ = try await Store.status(at: folder.url)
        #expect(!report.isHealthy)
        #expect(try MaintenanceFixture.snapshot(folder.url) == before)
        try await store.close()
    }

    @Test("a folder that is not a store is one problem, and a missing folder throws")
    func notAStore() async throws {
        let folder = TemporaryFolder()
        try folder.write("hello", to: "notes.txt")
        let report = try await Store.verify(at: folder.url)
        #expect(report.problems.map(\.kind) == [.marker])
        #expect(!folder.exists("folio.json"))
        await expectFolioError(.io) { try await Store.verify(at: folder.file("missing")) }
    }
}
