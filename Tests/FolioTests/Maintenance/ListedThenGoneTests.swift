@testable import Folio
import Foundation
import Testing

/// A data file listed by `folio status` or `folio verify` and gone when it is read (an editor that
/// saves by deleting and creating, a sync tool replacing it) is said to be skipped, never counted
/// or checked as an empty file in silence; a file that goes between two `stat`s of another check
/// cannot hide it, since the read itself tells. The moment between the listing and the read is
/// made with the scan's test seam: timing alone cannot hit it.
@Suite struct ListedThenGoneTests {
    static let days = ["2025-03-01", "2025-03-02", "2025-03-03"]
    static let gone = "todos/2025-03/2025-03-02.json"

    /// A store of three todos a day, closed, and a scan whose read of ``gone`` finds it deleted.
    static func scanWithAFileGoing(_ folder: TemporaryFolder) async throws -> FolderScan {
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in
            for day in days { for n in 0..<3 { try tx.upsert(todo("\(day) #\(n)", on: day)) } }
        }
        try await store.close()
        // Without the saved id index, status reads every file (with it, an unchanged file is
        // counted from the index without being read).
        try FileManager.default.removeItem(at: folder.url.appendingPathComponent(".folio/index/todos"))
        let scan = FolderScan(root: folder.url)
        let file = folder.url.appendingPathComponent(gone)
        scan.beforeReadingListedFile = { path in
            if path == gone { try? FileManager.default.removeItem(at: file) }   // the test's own deletion
        }
        return scan
    }

    static func goneReports(_ scan: FolderScan) -> [StoreProblem] {
        scan.problems.filter { $0.path == gone && $0.message.contains("was listed but gone") }
    }

    @Test func statusSaysAFileGoneSinceItWasListedIsNotCounted() async throws {
        let folder = TemporaryFolder()
        let scan = try await Self.scanWithAFileGoing(folder)
        _ = try await scan.glance(headLimit: 0)
        let counted = scan.collections["todos"]?.files ?? [:]
        #expect(counted.count == 2 && counted.values.allSatisfy { $0.count == 3 }, "the two other days counted: \(counted)")
        let reports = Self.goneReports(scan)
        #expect(reports.count == 1 && reports.first?.severity == .warning, "\(scan.problems)")
        #expect(reports.first?.message.contains("not counted") == true)
    }

    @Test func verifySaysAFileGoneSinceItWasListedIsNotChecked() async throws {
        let folder = TemporaryFolder()
        let scan = try await Self.scanWithAFileGoing(folder)
        try await scan.run()
        let reports = Self.goneReports(scan)
        #expect(reports.count == 1 && reports.first?.severity == .warning, "\(scan.problems)")
        #expect(reports.first?.message.contains("not checked") == true)
    }
}
