@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// Two clones of a store's git repository, each written by the app, merged by git: with Folio's
/// merge driver (`folio merge-driver setup`), and without it, resolving the conflict markers with
/// `folio resolve` (FORMAT.md, "Git"). A deletion made in one clone applies in the other; nothing
/// either clone wrote is lost.
@Suite(.enabled(if: Tools.runs("git"), "needs git: \(Tools.install("git"))"))
struct GitMergeTests {
    private static let day = "2026-11-22"
    private static let path = "todos/2026-11/2026-11-22.json"

    /// How the clones merge.
    enum Merge: String, CaseIterable, Sendable { case driver, diff3Markers, plainMarkers }

    @Test(arguments: Merge.allCases) func aPullMergesBothClonesPerEntity(merge: Merge) async throws {
        let gitPath = try Tools.require("git")
        let root = TemporaryFolder()
        let remote = root.url.appendingPathComponent("remote.git")
        let a = root.url.appendingPathComponent("a"), b = root.url.appendingPathComponent("b")
        func git(_ folder: URL, _ arguments: String...) throws -> (status: Int32, output: String) { try run(folder, arguments) }
        func run(_ folder: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: gitPath)
            process.arguments =
                [
                    "-C", folder.path, "-c", "user.name=Folio", "-c", "user.email=folio@example.com",
                    "-c", "init.defaultBranch=main", "-c", "pull.rebase=false",
                ] + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, output)
        }
        func ok(_ folder: URL, _ arguments: String...) throws {
            let outcome = try run(folder, arguments)
            try #require(outcome.status == 0, "git \(arguments.joined(separator: " ")): \(outcome.output)")
        }
        func titles(_ folder: URL) async throws -> [String] {
            let store = try await Store.open(at: folder, configuration: .testing())
            let todos = try await store.fetch(Query<Todo>(.day(Self.day))).map(\.title).sorted()
            try await store.close()
            return todos
        }
        try FileManager.default.createDirectory(at: a, withIntermediateDirectories: true)
        try ok(root.url, "init", "-q", "--bare", remote.path)
        try ok(a, "init", "-q")

        // Clone A writes two todos and publishes them.
        var store = try await Store.open(at: a, configuration: .testing())
        let milk = todo("Buy milk", on: Self.day), bread = todo("Buy bread", on: Self.day)
        try await store.write { tx in
            try tx.upsert(milk); try tx.upsert(bread)
        }
        try await store.close()
        if merge == .driver {
            let outcome = try await FolioTool.run(["merge-driver", "setup", a.path])
            try #require(outcome.code == 0, "\(outcome.errors)")
        }
        // What FORMAT.md says to commit: the data files and folio.json, not the outbox.
        try Data("outbox/\n".utf8).write(to: a.appendingPathComponent(".gitignore"))
        try ok(a, "add", "-A")
        try ok(a, "commit", "-q", "-m", "two todos")
        try ok(a, "remote", "add", "origin", remote.path)
        try ok(a, "push", "-q", "origin", "HEAD:main")
        try ok(root.url, "clone", "-q", remote.path, b.path)
        #expect(try git(a, "status", "--porcelain").output.isEmpty, "the machinery stays out of git")

        // Clone B deletes the milk and adds eggs; A adds tea meanwhile. Both commit.
        store = try await Store.open(at: b, configuration: .testing())
        _ = try await store.write { tx in try tx.delete(Todo.self, id: milk.id) }
        try await store.write { tx in try tx.upsert(todo("Buy eggs", on: Self.day)) }
        try await store.close()
        try ok(b, "commit", "-q", "-am", "B: no milk, eggs")
        try ok(b, "push", "-q", "origin", "HEAD:main")
        store = try await Store.open(at: a, configuration: .testing())
        try await store.write { tx in try tx.upsert(todo("Buy tea", on: Self.day)) }
        try await store.close()
        try ok(a, "commit", "-q", "-am", "A: tea")
        if merge == .driver {
            // The driver is in the repository's config: the clone sets it up too.
            let outcome = try await FolioTool.run(["merge-driver", "setup", b.path])
            try #require(outcome.code == 0, "\(outcome.errors)")
        }
        if merge == .diff3Markers { try ok(a, "config", "merge.conflictStyle", "diff3") }

        let pull = try git(a, "pull", "-q", "origin", "main")
        switch merge {
        case .driver:
            try #require(pull.status == 0, "the driver merges: \(pull.output)")
        case .diff3Markers, .plainMarkers:
            try #require(pull.status != 0, "without the driver, git leaves markers: \(pull.output)")
            // Folio refuses the file with markers, naming where, and loses nothing meanwhile.
            let opened = try await Store.open(at: a, configuration: .testing())
            await #expect(throws: FolioError.self) { _ = try await opened.fetch(Query<Todo>(.day(Self.day))) }
            try await opened.close()
            let resolved = try await FolioTool.run(["resolve", a.appendingPathComponent(Self.path).path])
            try #require(resolved.code == 0, "\(resolved.errors)")
            try ok(a, "commit", "-q", "-am", "merged")
        }
        // folio resolve merges the three versions git keeps for the conflict, whatever the style.
        let expected = ["Buy bread", "Buy eggs", "Buy tea"]
        let merged = try await titles(a)
        #expect(merged == expected, "\(merged)")
        // The milk, deleted in B, is deleted in A's outbox too: its create is taken back (it was
        // never sent), and eggs, added in B, is a change A's app will send as well.
        store = try await Store.open(at: a, configuration: .testing())
        let pending = try await store.pendingCommands()
        try await store.close()
        let milkCommands = pending.filter { $0.entityID == milk.id.uuidString }
        #expect(milkCommands.isEmpty || milkCommands.last?.operation == .delete, "\(milkCommands)")

        // Published, and pulled by B (a fast-forward): both clones hold the same todos.
        try ok(a, "commit", "-q", "-am", "Folio's rewrite", "--allow-empty")
        try ok(a, "push", "-q", "origin", "HEAD:main")
        try ok(b, "pull", "-q", "origin", "main")
        #expect(try await titles(b) == expected)
        #expect(try await titles(a) == expected)
    }
}
