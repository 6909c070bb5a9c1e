@testable import Folio
import Foundation
import Testing

/// A number its Swift field cannot hold: the error names the file, line, column and field (not
/// "The given data was not valid JSON."), and verify reports a number no Swift type can hold.
@Suite struct NumberRangeTests {
    static let cases: [(number: String, beyondEveryType: Bool)] = [
        ("99999999999999999999999", false), ("1.5", false), ("1e400", true), ("-1e999", true),
    ]

    @Test(arguments: cases.map(\.number))
    func aNumberTheFieldCannotHoldIsNamedWithItsPlace(number: String) async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let broken = todo("Broken", on: "2026-11-22"), fine = todo("Fine", on: "2026-11-22")
        try await store.write { tx in
            try tx.upsert(broken)
            try tx.upsert(fine)
        }
        try await store.close()
        let path = "todos/2026-11/2026-11-22.json"
        var text = try folder.text(path)
        let id = broken.id.uuidString
        let range = try #require(text.range(of: "\"priority\": 0", range: text.range(of: "\"\(id)\"")!.upperBound..<text.endIndex))
        text.replaceSubrange(range, with: "\"priority\": \(number)")
        try folder.write(text, to: path)
        let line = text[..<range.lowerBound].filter { $0 == "\n" }.count + 1

        let reader = try await Store.open(at: folder.url, configuration: .testing())
        let error = await expectFolioError(.decodingFailed) { try await reader.get(Todo.self, id: broken.id) }
        #expect(error?.path == path && error?.line == line && error?.column != nil, "\(String(describing: error))")
        #expect(error?.message.contains("\"priority\"") == true && error?.message.contains(number) == true, "\(String(describing: error))")
        #expect(error?.message.contains("not valid JSON") == false)
        #expect(try await reader.get(Todo.self, id: fine.id)?.title == "Fine", "the rest of the partition keeps working")
        try await reader.close()

        let report = try await Store.verify(at: folder.url)
        let beyond = Self.cases.first { $0.number == number }!.beyondEveryType
        #expect(
            report.errors.contains { $0.path == path && $0.line == line && $0.message.contains("priority") } == beyond,
            "\(report.problems.map(\.description))")
    }

    /// A decoding failure whose file cannot be read again to place it (it went, or the disk
    /// failed) is still the decoding failure, without a line: the read's own error was thrown in
    /// its place.
    @Test func aDecodingFailureWhoseFileCannotBeReadAgainStaysADecodingFailure() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let broken = todo("Broken", on: "2026-11-22")
        try await store.write { tx in try tx.upsert(broken) }
        try await store.close()
        let path = "todos/2026-11/2026-11-22.json"
        let text = try folder.text(path)
        try folder.write(text.replacingOccurrences(of: "\"priority\": 0", with: "\"priority\": 1.5"), to: path)

        // The partition's load reads the file; every later read of it fails.
        let reads = LockedBox(0)
        let hook: IOHook = { step throws(FolioError) in
            guard step == .read(path) else { return }
            var count = 0
            reads.mutate { reads in
                reads += 1
                count = reads
            }
            if count > 1 { throw FolioError(.io, "the disk failed (injected)", path: path) }
        }
        let reader = try await Store.open(at: folder.url, configuration: .testing(hook: hook))
        let error = await expectFolioError(.decodingFailed) { try await reader.get(Todo.self, id: broken.id) }
        #expect(error?.path == path && error?.line == nil && error?.message.contains("priority") == true, "\(String(describing: error))")
        #expect(reads.value >= 2, "the failure was not placed by reading the file again")
        try await reader.close()
    }
}
