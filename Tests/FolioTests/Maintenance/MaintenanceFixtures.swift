@testable import Folio
import Foundation
import Testing

/// Stores written through the real API, for the maintenance tests to break by hand.
enum MaintenanceFixture {
    static let milk = UUID(uuidString: "A9C9A662-A80D-4EE3-8A4C-6B927E9F866B")!

    /// A closed store with todos on two days of two months, tags, daily stats, and commands
    /// pending in the outbox (todos and tags are push collections).
    static func store(in folder: TemporaryFolder) async throws {
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in
            try tx.upsert(Todo(id: milk, title: "Buy milk", date: "2026-11-22"))
            try tx.upsert(todo("Call mom", on: "2026-11-22"))
            try tx.upsert(todo("Pay rent", on: "2026-10-01", done: true))
            try tx.upsert(Tag(id: "home", name: "Home", color: "green"))
            try tx.upsert(DailyStat(date: "2026-11-22", completed: 1, tagStats: [TagStat(id: "s1", tagID: "home", count: 1)]))
        }
        try await store.write { tx in try tx.upsert(Tag(id: "work", name: "Work", color: "blue")) }
        try await store.write { tx in try tx.upsert(Tag(id: "errands", name: "Errands", color: "red")) }
        try await store.close()
    }

    /// Every file and folder below `folder` with its bytes and modification time.
    static func snapshot(_ folder: URL) throws -> [String: String] {
        var result: [String: String] = [:]
        let root = folder.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [:] }
        while let path = walker.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: root + "/" + path)
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory)
            let content = isDirectory.boolValue ? "dir" : try Data(contentsOf: URL(fileURLWithPath: root + "/" + path)).base64EncodedString()
            result[path] = "\(modified) \(content)"
        }
        return result
    }
}

/// Expects exactly one problem of `kind` at `path` (and line/column when given).
@discardableResult
func expectProblem(
    _ report: VerificationReport, _ severity: StoreProblem.Severity, _ kind: StoreProblem.Kind, at path: String,
    line: Int? = nil, column: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation
) -> StoreProblem? {
    let found = report.problems.filter { $0.kind == kind && $0.path == path }
    guard let problem = found.first else {
        Issue.record("no \(kind) problem at \(path); found:\n\(report.problems.map(\.description).joined(separator: "\n"))", sourceLocation: sourceLocation)
        return nil
    }
    #expect(found.count == 1, "\(found)", sourceLocation: sourceLocation)
    #expect(problem.severity == severity, "\(problem)", sourceLocation: sourceLocation)
    if let line { #expect(problem.line == line, "\(problem)", sourceLocation: sourceLocation) }
    if let column { #expect(problem.column == column, "\(problem)", sourceLocation: sourceLocation) }
    return problem
}
