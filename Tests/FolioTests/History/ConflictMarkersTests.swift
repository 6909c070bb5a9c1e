@testable import Folio
import Foundation
import Testing

/// `folio resolve`'s reading of git's conflict markers (DataFileMerge.resolve).
@Suite struct ConflictMarkersTests {
    private func file(_ lines: [String]) -> [UInt8] { Array((lines.joined(separator: "\n") + "\n").utf8) }

    @Test func plainMarkersKeepEveryEntityOfEitherSide() throws {
        let merged = try DataFileMerge.resolve(
            file([
                "{", "  \"entities\": {",
                "<<<<<<< HEAD", "    \"a\": {\"t\": \"ours\"},", "    \"b\": {\"t\": \"x\"}", "=======", "    \"a\": {\"t\": \"theirs\"},",
                "    \"c\": {\"t\": \"y\"}", ">>>>>>> other",
                "  }", "}",
            ]), path: "todos.json")
        let contents = try PartitionFile.decode(merged.bytes, path: "todos.json")
        #expect(Set(contents.entities.keys) == ["a", "b", "c"])
        #expect(contents.entities["a"]?.objectValue?["t"] == .string("theirs"))
        #expect(!merged.hadBase)
        #expect(merged.conflicts == ["a"])
    }

    @Test func diff3MarkersMergeAgainstTheBase() throws {
        let merged = try DataFileMerge.resolve(
            file([
                "{", "  \"entities\": {",
                "<<<<<<< HEAD", "    \"a\": {\"t\": \"1\"},", "    \"n\": {\"t\": \"new\"}",
                "||||||| base", "    \"a\": {\"t\": \"1\"},", "    \"gone\": {\"t\": \"2\"}",
                "=======", "    \"a\": {\"t\": \"1\"}", ">>>>>>> other",
                "  }", "}",
            ]), path: "todos.json")
        let contents = try PartitionFile.decode(merged.bytes, path: "todos.json")
        // "gone": ours deleted it, theirs deleted it too; "n": added by ours.
        #expect(Set(contents.entities.keys) == ["a", "n"])
        #expect(merged.hadBase)
    }

    @Test(arguments: [["{", "}"], ["<<<<<<< a", "{}"], ["{}", ">>>>>>> b"]])
    func brokenMarkersNameTheirLine(lines: [String]) {
        #expect(throws: FolioError.self) { try DataFileMerge.resolve(file(lines), path: "todos.json") }
    }
}
