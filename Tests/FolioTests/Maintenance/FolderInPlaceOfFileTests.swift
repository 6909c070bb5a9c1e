@testable import Folio
import Foundation
import Testing

/// A folder where Folio expects a file (a day file, a month file, an unpartitioned collection's
/// file, `.folio/lock`, `.folio/journal`): verify fails naming it, the store's error says what is
/// wrong, and the other partitions keep working.
@Suite struct FolderInPlaceOfFileTests {
    @Test func aFolderInPlaceOfAPartitionFile() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        for path in ["todos/2026-11/2026-11-23.json/", "dailyStats/2026-12.json/"] {
            try FileManager.default.createDirectory(at: folder.file(path), withIntermediateDirectories: true)
        }
        try FileManager.default.removeItem(at: folder.file("tags.json"))
        try FileManager.default.createDirectory(at: folder.file("tags.json"), withIntermediateDirectories: true)
        let report = try await Store.verify(at: folder.url)
        for path in ["todos/2026-11/2026-11-23.json", "tags.json", "dailyStats/2026-12.json"] {
            #expect(report.errors.contains { $0.path == path && $0.message.contains("is a folder") }, "\(path): \(report.problems.map(\.description))")
        }

        let store = try await Store.open(at: folder.url, configuration: .testing())
        let error = await expectFolioError(.corruptFile) { try await store.fetch(Query<Tag>()) }
        #expect(error?.path == "tags.json" && error?.message.contains("is a folder") == true, "\(String(describing: error))")
        let day = await expectFolioError(.corruptFile) { try await store.fetch(Query<Todo>(.day("2026-11-23"))) }
        #expect(day?.path == "todos/2026-11/2026-11-23.json", "\(String(describing: day))")
        #expect(try await store.fetch(Query<Todo>(.day("2026-11-22"))).count == 2, "the other partitions keep working")
        try await store.close()
    }

    @Test func aFolderInPlaceOfTheLockOrTheJournal() async throws {
        for path in [".folio/lock", ".folio/journal"] {
            let folder = TemporaryFolder()
            try await MaintenanceFixture.store(in: folder)
            try FileManager.default.removeItem(at: folder.file(path))
            try FileManager.default.createDirectory(at: folder.file(path), withIntermediateDirectories: true)
            let report = try await Store.verify(at: folder.url)
            #expect(report.errors.contains { $0.path == path && $0.message.contains("is a folder") }, "\(report.problems.map(\.description))")
            let error = await expectFolioError(.corruptFile) { try await Store.open(at: folder.url, configuration: .testing()) }
            #expect(error?.path == path && error?.message.contains("is a folder") == true, "\(String(describing: error))")
        }
    }
}
