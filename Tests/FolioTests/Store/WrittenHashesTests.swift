@testable import Folio
import Foundation
import Testing

/// `.folio/written` as a shortcut: a file holding what a checkpoint last wrote to it is Folio's
/// own without listing its kept versions, and its newer entries name what a checkpoint wrote.
@Suite struct WrittenHashesTests {
    /// A todo on each of twenty days, checkpointed as the store closes.
    static func twentyDays(in folder: TemporaryFolder) async throws -> (days: [String], todos: [Todo]) {
        let days = (1...20).map { String(format: "2026-11-%02d", $0) }
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let todos = days.map { todo("On \($0)", on: $0) }
        try await store.write { tx in for todo in todos { try tx.upsert(todo) } }
        try await store.close()
        return (days, todos)
    }

    @Test func theLastEntryOfEachFileCounts() throws {
        let (a, b) = (ContentHash(Array("a".utf8)), ContentHash(Array("b".utf8)))
        let log = """
            folio-written 1 origin 1 2 since 1 gone-below 1
            W 2 \(a) todos/2026-11/2026-11-01.json
            W 2 \(a) todos/2026-11/2026-11-02.json
            W 3 \(b) todos/2026-11/2026-11-01.json
            R 4 todos/2026-11/2026-11-03.json
            C 4
            W 5 \(a) todos/2026-11/2026-11-0
            """
        let hashes = try #require(WrittenHashes(log: Array(log.utf8)))
        #expect(hashes.isLastWritten(b, at: "todos/2026-11/2026-11-01.json"))
        #expect(!hashes.isLastWritten(a, at: "todos/2026-11/2026-11-01.json"))
        #expect(hashes.isLastWritten(a, at: "todos/2026-11/2026-11-02.json"))
        #expect(!hashes.isLastWritten(a, at: "todos/2026-11/2026-11-03.json"))
        #expect(hashes.paths(writtenAfter: 2).sorted() == ["todos/2026-11/2026-11-01.json", "todos/2026-11/2026-11-03.json"])
        #expect(hashes.paths(writtenAfter: 4).isEmpty)   // the torn last line is not a line
        #expect(WrittenHashes(log: Array("not a log\n".utf8)) == nil)
    }

    /// Each day's kept versions are made unreadable (their folder replaced by a file): a day
    /// whose file is what the checkpoint wrote is read without a word, a day a person saved is
    /// checked against its kept versions, which are reported unreadable.
    @Test func aFileAsACheckpointLastWroteItIsReadWithoutItsKeptVersions() async throws {
        let folder = TemporaryFolder()
        let (days, todos) = try await Self.twentyDays(in: folder)
        let edited = todos[5]
        try HandEditSyncTests.editByHand(HandEditSyncTests.dayFile(folder.url, edited.date), id: edited.id.uuidString, title: "Typed")
        for day in days {
            let versions = folder.file(".folio/versions/todos/2026-11/\(day).json")
            try FileManager.default.removeItem(at: versions)
            try Data("not a folder".utf8).write(to: versions)
        }
        let log = LogRecorder()
        let reopened = try await Store.open(at: folder.url, configuration: .testing(log: log.handler))
        let titles = try await reopened.fetch(Query<Todo>(.month("2026-11"))).map(\.title)
        #expect(titles.count == 20 && titles.contains("Typed"))
        let unreadable = log.messages.filter { $0.text.contains("cannot read the kept versions") }.compactMap(\.path)
        #expect(unreadable == ["todos/2026-11/\(edited.date).json"])
        try await reopened.close()
    }

    /// The log is read only by a process that reads many files, once while it is unchanged: a
    /// `get` of one todo does not read it, a query over twenty days does, a second query does not,
    /// and a checkpoint that appends to it makes the next query read it again.
    @Test func theLogIsReadOnlyWhenManyFilesAreAndOncePerChange() async throws {
        let folder = TemporaryFolder()
        let (_, todos) = try await Self.twentyDays(in: folder)
        let reads = PathCounter()
        var configuration = Store.Configuration.testing()
        configuration.ioHook = { step in if case .read(let path) = step, path == WrittenLog.path { reads.add(path) } }
        let reader = try await Store.open(at: folder.url, configuration: configuration)
        reads.reset()   // an open reads the log's header
        #expect(try await reader.get(Todo.self, id: todos[3].id) == todos[3])
        #expect(reads.count == 0)
        #expect(try await reader.fetch(Query<Todo>(.month("2026-11"))).count == 20)
        #expect(reads.count == 1)
        _ = try await reader.fetch(Query<Todo>(.month("2026-11")))
        #expect(reads.count == 1)
        try await reader.write { tx in try tx.upsert(todo("Later", on: "2026-11-21")) }
        try await reader.checkpoint()
        reads.reset()
        let other = try await Store.open(at: folder.url, configuration: .testing())
        try await other.write { tx in try tx.upsert(todo("Elsewhere", on: "2026-11-22")) }
        try await other.close()
        #expect(try await reader.fetch(Query<Todo>(.month("2026-11"))).count == 22)
        #expect(reads.count == 1)
        try await reader.close()
    }
}
