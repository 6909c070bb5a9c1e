@testable import Folio
import Foundation
import Testing

/// Ids and member names are exact bytes: two texts that are canonically equivalent but differ in
/// bytes ("café" precomposed and decomposed) are never silently merged, and errors print only
/// safe characters.
@Suite struct IdentifierBytesTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test func aDecomposedIdIsRefusedNotMerged() async throws {
        #expect(Self.composed == Self.decomposed, "Swift's == is canonical equivalence: the trap")
        #expect(Array(Self.composed.utf8) != Array(Self.decomposed.utf8))
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: Self.composed, name: "Composed", color: "#000000")) }
        let error = await expectFolioError(.invalidName) {
            try await store.write { tx in try tx.upsert(Tag(id: Self.decomposed, name: "Decomposed", color: "#000000")) }
        }
        #expect(error?.message.contains("NFC") == true, "\(String(describing: error))")
        #expect(try await store.fetch(Query<Tag>()).map(\.name) == ["Composed"], "the first entity was replaced")
        try await store.close()
    }

    @Test func canonicallyEquivalentKeysInAFileAreReportedWithTheirPlace() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "home", name: "Home", color: "#000000")) }
        try await store.close()
        let entity = { (id: String) in "{\"color\": \"#000000\", \"id\": \"\(id)\", \"name\": \"\(id)\"}" }
        try folder.write(
            "{\n  \"entities\": {\n    \"\(Self.composed)\": \(entity(Self.composed)),\n    \"\(Self.decomposed)\": \(entity(Self.decomposed))\n  }\n}\n",
            to: "tags.json")
        let reader = try await Store.open(at: folder.url, configuration: .testing())
        let both = await expectFolioError(.corruptFile) { try await reader.fetch(Query<Tag>()) }
        #expect(both?.line == 4 && both?.message.contains("canonically equivalent") == true, "\(String(describing: both))")
        // A file holding only the decomposed id: the id is refused where it is.
        try folder.write("{\n  \"entities\": {\n    \"\(Self.decomposed)\": \(entity(Self.decomposed))\n  }\n}\n", to: "tags.json")
        let alone = await expectFolioError(.corruptFile) { try await reader.fetch(Query<Tag>()) }
        #expect(alone?.line == 3 && alone?.message.contains("NFC") == true, "\(String(describing: alone))")
        try await reader.close()
        let report = try await Store.verify(at: folder.url)
        #expect(report.errors.contains { $0.path == "tags.json" && $0.line == 3 }, "\(report.problems.map(\.description))")
    }

    @Test func errorsPrintOnlySafeCharacters() throws {
        let hostile = "evil\u{1B}[2J\u{0}\u{7}\u{9B}31m\u{202E}txt.exe\nforged line"
        let error = FolioError(.corruptFile, "entity \"\(hostile)\" is broken", path: "tags\u{1B}.json", entityID: hostile + "x")
        let text = error.description
        #expect(!text.unicodeScalars.contains { SafeText.needsEscape($0) }, "\(text.debugDescription)")
        #expect(text.contains("\\u{1B}[2J") && text.contains("\\u{0}") && text.contains("\\u{202E}") && text.contains("\\n"))
        #expect(SafeText.escaped("café ✓ 日本") == "café ✓ 日本")
        let problem = StoreProblem(.error, .badShape, path: "a\u{1B}b.json", line: 1, column: 1, message: hostile)
        #expect(!problem.description.unicodeScalars.contains { SafeText.needsEscape($0) })
    }

    @Test func theToolPrintsOnlySafeCharacters() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        try folder.write("{}", to: "evil\u{1B}[2J\u{202E}nosj.json")
        for command in [["verify", folder.url.path], ["status", folder.url.path], ["outbox", "list", folder.url.path]] {
            let outcome = try await FolioTool.run(command)
            let text = outcome.output + outcome.errors
            if command[0] == "verify" { #expect(text.contains("evil\\u{1B}[2J\\u{202E}nosj.json"), "\(text)") }
            #expect(!text.unicodeScalars.contains { $0 != "\n" && $0 != "\t" && SafeText.needsEscape($0) }, "\(command): \(text.debugDescription)")
        }
    }
}
