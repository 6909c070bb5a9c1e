@testable import Folio
import Foundation
import Testing

/// A file that arrives while the store is open (a git pull, rsync, a file copied in) holding an id
/// the store's id index has never seen: `get` finds it, and `delete` deletes it. Before, an open
/// store trusted its index, so a get answered nil and a delete did nothing, and the entity stayed.
@Suite struct ArrivingFilesTests {
    @Test func anIdInAFileThatArrivedIsFoundAndDeleted() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in
            try tx.upsert(todo("a", on: "2026-11-20")); try tx.upsert(todo("b", on: "2026-11-21"))
        }
        try await store.checkpoint()
        #expect(try await store.get(Todo.self, id: UUID()) == nil)   // the id index is built
        // Another copy of the app writes two todos; their files are copied in.
        let other = TemporaryFolder()
        let writer = try await Store.open(at: other.url, configuration: .testing())
        let x = todo("x", on: "2026-11-22"), y = todo("y", on: "2026-11-23")
        try await writer.write { tx in
            try tx.upsert(x); try tx.upsert(y)
        }
        try await writer.close()
        let month = folder.url.appendingPathComponent("todos/2026-11")
        for day in ["2026-11-22", "2026-11-23"] {
            try FileManager.default.copyItem(at: other.url.appendingPathComponent("todos/2026-11/\(day).json"), to: month.appendingPathComponent("\(day).json"))
        }
        #expect(try await store.get(Todo.self, id: x.id)?.title == "x", "get missed an id of a file that arrived")
        #expect(try await store.write { tx in try tx.delete(Todo.self, id: y.id) }, "the delete found nothing")
        try await store.close()
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.get(Todo.self, id: y.id) == nil, "the deleted todo is back")
        #expect(try await reopened.get(Todo.self, id: x.id)?.title == "x")
        // An unreadable file arrives: a get of an id found nowhere says it cannot tell.
        try Data("{ not json".utf8).write(to: month.appendingPathComponent("2026-11-24.json"))
        await #expect(throws: FolioError.self, "a get answered while a file of the collection is unreadable") {
            _ = try await reopened.get(Todo.self, id: UUID())
        }
        try await reopened.close()
    }
}
