@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// The `folio` binary, run as a child process, as a person or a script would.
struct FolioTool {
    struct Outcome {
        var code: Int32
        var output: String
        var errors: String
    }

    /// Waits for a started `folio` (or anything that runs it) to end; SIGKILLs it after
    /// `seconds`, recording that as an issue.
    static func finish(
        _ process: Process, within seconds: Int, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            sendKill(process.processIdentifier)
            Issue.record("\(what) did not finish in \(seconds) s", sourceLocation: sourceLocation)
        }
        process.waitUntilExit()
    }

    /// Runs `folio` with `arguments`, feeding `input` to its standard input; kills it after 60 s.
    static func run(
        _ arguments: [String], input: String = "", in directory: URL? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Outcome {
        let logs = FileManager.default.temporaryDirectory.appendingPathComponent("folio-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: logs) }
        let outURL = logs.appendingPathComponent("out"), errURL = logs.appendingPathComponent("err"), inURL = logs.appendingPathComponent("in")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: inURL.path, contents: Data(input.utf8))
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL), input = try FileHandle(forReadingFrom: inURL)
        defer { try? out.close(); try? err.close(); try? input.close() }
        let process = Process()
        process.executableURL = try CrashChild.executable("folio")
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        if let directory { process.currentDirectoryURL = directory }
        try process.run()
        try await finish(process, within: 60, "folio \(arguments)", sourceLocation: sourceLocation)
        return Outcome(
            code: process.terminationStatus,
            output: try String(contentsOf: outURL, encoding: .utf8), errors: try String(contentsOf: errURL, encoding: .utf8))
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }
}

@Suite("the folio binary", .serialized)
struct CLITests {
    @Test("--help for the tool and every subcommand; usage errors exit 2")
    func helpAndUsage() async throws {
        let tool = try await FolioTool.run(["--help"])
        #expect(tool.code == 0)
        #expect(tool.output.contains("usage: folio <command>"))
        for command in ["status", "verify", "recover", "outbox", "drain", "backup"] {
            let help = try await FolioTool.run([command, "--help"])
            #expect(help.code == 0, "\(command)")
            #expect(help.output.contains("usage: folio \(command)"), "\(command): \(help.output)")
        }
        for arguments in [
            [], ["frobnicate"], ["verify", "--nope"], ["verify", "a", "b"], ["outbox", "show", "abc"],
            ["outbox", "fly"], ["drain", "/tmp"], ["drain", "--server", "ftp://x", "/tmp"], ["backup", "/tmp"],
        ] {
            let outcome = try await FolioTool.run(arguments)
            #expect(outcome.code == 2, "\(arguments): \(outcome.errors)")
            #expect(outcome.errors.contains("usage: folio"), "\(arguments): \(outcome.errors)")
        }
    }

    @Test("verify: 0 on a clean store (DIR defaults to the current directory), 1 with a hand-broken file at its line and column")
    func verify() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let clean = try await FolioTool.run(["verify"], in: folder.url)
        #expect(clean.code == 0, "\(clean.output)\(clean.errors)")
        #expect(clean.output.contains("0 errors, 0 warnings"))

        try folder.write("{\n  \"entities\": {\n    \"A\": {\"id\": \"A\" \"x\": 1}\n  }\n}\n", to: "todos/2026-11/2026-11-22.json")
        let broken = try await FolioTool.run(["verify", folder.url.path])
        #expect(broken.code == 1)
        #expect(broken.output.split(separator: "\n").contains { $0.hasPrefix("todos/2026-11/2026-11-22.json:3:21: error: invalid JSON") }, "\(broken.output)")

        let json = try FolioTool.json(try await FolioTool.run(["verify", "--json", folder.url.path]).output)
        #expect(json["healthy"] as? Bool == false)
        let problems = try #require(json["problems"] as? [[String: Any]])
        #expect(
            problems.contains {
                $0["path"] as? String == "todos/2026-11/2026-11-22.json" && $0["line"] as? Int == 3 && $0["column"] as? Int == 21
                    && $0["kind"] as? String == "invalidJSON"
            })

        try folder.write("{\"entities\": {}}\n", to: "todos/2026-11/2026-11-22.json")
        try folder.write("x", to: "tags.json~")
        #expect(try await FolioTool.run(["verify", folder.url.path]).code == 0, "a warning alone is not a failure")
        #expect(try await FolioTool.run(["verify", "--strict", folder.url.path]).code == 1)
    }

    @Test("recover after kill -9 leaves a folder that verifies, and says what it did")
    func recover() async throws {
        let folder = TemporaryFolder()
        _ = try await RecoverTests.killedWriter(folder, logs: folder.url.deletingLastPathComponent())
        try folder.write("half", to: ".folio/tmp/4242-1-2026-01-25.json")
        let recovered = try await FolioTool.run(["recover", folder.url.path])
        #expect(recovered.code == 0, "\(recovered.output)\(recovered.errors)")
        #expect(recovered.output.contains(".folio/tmp/4242-1-2026-01-25.json: removed a temp file"), "\(recovered.output)")
        #expect(recovered.output.contains(".folio/journal: wrote"), "\(recovered.output)")
        let verified = try await FolioTool.run(["verify", folder.url.path])
        #expect(verified.code == 0, "\(verified.output)")
        let again = try FolioTool.json(try await FolioTool.run(["recover", "--json", folder.url.path]).output)
        #expect((again["actions"] as? [Any])?.isEmpty == true)
        #expect(again["healthy"] as? Bool == true)
        let empty = TemporaryFolder()
        try FileManager.default.createDirectory(at: empty.url, withIntermediateDirectories: true)
        #expect(try await FolioTool.run(["recover", empty.url.path]).code == 1)
        #expect(empty.allFiles().isEmpty, "recover creates no store")
    }

    @Test("status --json: collections, entities, outbox, journal")
    func status() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let outcome = try await FolioTool.run(["status", "--json", folder.url.path])
        #expect(outcome.code == 0, "\(outcome.errors)")
        let json = try FolioTool.json(outcome.output)
        let collections = try #require(json["collections"] as? [[String: Any]])
        let counts = Dictionary(uniqueKeysWithValues: collections.map { ($0["name"] as! String, $0["entities"] as! Int) })
        #expect(counts == ["dailyStats": 1, "tags": 3, "todos": 3])
        #expect((json["outbox"] as? [String: Any])?["pending"] as? Int == 6)
        #expect((json["journal"] as? [String: Any])?["pendingTransactions"] as? Int == 0)
        let text = try await FolioTool.run(["status", folder.url.path])
        #expect(text.output.contains("todos: 3 entities in 2 day partitions (2026-10-01 … 2026-11-22)"), "\(text.output)")
    }

    @Test("outbox list, show, retry, and drop (which asks first: a dropped command is a lost change)")
    func outbox() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.failCommand(1, reason: FailureReason("the server refused it", status: 422))
        try await store.close()
        let path = folder.url.path

        let list = try FolioTool.json(try await FolioTool.run(["outbox", "list", "--json", path]).output)
        #expect((list["pending"] as? [Any])?.count == 5)
        let failed = try #require((list["failed"] as? [[String: Any]])?.first)
        #expect(failed["sequence"] as? Int == 1 && failed["status"] as? Int == 422)
        let show = try FolioTool.json(try await FolioTool.run(["outbox", "show", "1", "--json", path]).output)
        #expect(show["state"] as? String == "failed")
        #expect((show["command"] as? [String: Any])?["sequence"] as? Int == 1)
        #expect(try await FolioTool.run(["outbox", "show", "77", path]).code == 1)

        let refused = try await FolioTool.run(["outbox", "drop", "1", path], input: "no\n")
        #expect(refused.code == 1)
        #expect(refused.errors.contains("LOST"), "\(refused.errors)")
        #expect(try await Store.status(at: folder.url).failed.map(\.command.sequence) == [1])

        #expect(try await FolioTool.run(["outbox", "retry", "1", path]).code == 0)
        var status = try await Store.status(at: folder.url)
        #expect(status.failed.isEmpty && status.pending.first?.sequence == 1)

        let again = try await Store.open(at: folder.url, configuration: .testing())
        try await again.failCommand(1, reason: FailureReason("refused again", status: 422))
        try await again.close()
        #expect(try await FolioTool.run(["outbox", "drop", "1", path], input: "yes\n").code == 0)
        status = try await Store.status(at: folder.url)
        #expect(status.failed.isEmpty && !status.pending.contains { $0.sequence == 1 })
        #expect(try await FolioTool.run(["outbox", "drop", "2", "--yes", path]).code == 1, "2 is pending, not failed")
    }

    @Test("drain sends every pending command to a PROTOCOL.md server; backup makes a copy that verifies")
    func drainAndBackup() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let server = try TestServer()
        defer { server.stop() }
        let drained = try await FolioTool.run(["drain", "--server", server.baseURL.absoluteString, folder.url.path])
        #expect(drained.code == 0, "\(drained.output)\(drained.errors)")
        #expect(drained.output.contains("sent 6"), "\(drained.output)")
        #expect(server.entity("tags", "work") != nil)
        #expect(server.entity("todos", MaintenanceFixture.milk.uuidString) != nil)
        #expect(try await Store.status(at: folder.url).pending.isEmpty)

        let copy = folder.url.deletingLastPathComponent().appendingPathComponent("copy")
        let backup = try await FolioTool.run(["backup", folder.url.path, copy.path])
        #expect(backup.code == 0, "\(backup.output)\(backup.errors)")
        #expect(try await Store.verify(at: copy).problems.isEmpty)
        #expect(try await FolioTool.run(["backup", folder.url.path, copy.path]).code == 1, "the destination is not empty now")
    }

    @Test("drain survives a connection cut inside a response's headers (it crashes URLSession on Linux): it drains in a child process and restarts it")
    func drainSurvivesACutInsideTheHeaders() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "work", name: "Work", color: "#ff0000")) }
        try await store.close()
        let server = try ScriptedHTTPServer()
        // The first two answers to the PUT stop after the status line, with an orderly close.
        let drained = try await FolioTool.run(["drain", "--server", server.url(0, "cut/").absoluteString, folder.url.path])
        #expect(drained.code == 0, "\(drained.output)\(drained.errors)")
        #expect(drained.errors.contains("swift-corelibs-foundation #5285"), "\(drained.errors)")
        #expect(drained.output.contains("sent 1"), "\(drained.output)")
        let applied = try server.log().filter { $0["method"] == "PUT" }
        #expect(applied.count == 1 && applied.first?["path"] == "/cut/tags/work")
        #expect(try await Store.status(at: folder.url).pending.isEmpty)
    }

    /// The boundary of swift-corelibs-foundation #5285: the same cut as a reset is an ordinary
    /// network error (run through the tool, so that a crash could not take the test runner down).
    @Test("a reset inside a response's headers is a network error, not a crash")
    func aResetInsideTheHeadersIsANetworkError() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Tag(id: "work", name: "Work", color: "#ff0000")) }
        try await store.close()
        let server = try ScriptedHTTPServer()
        let drained = try await FolioTool.run(["drain", "--server", server.url(0, "reset/").absoluteString, folder.url.path])
        #expect(drained.code == 1, "\(drained.output)\(drained.errors)")
        #expect(!drained.errors.contains("#5285") && !drained.errors.contains("Fatal error"), "\(drained.errors)")
        #expect(drained.output.contains("remaining 1") && drained.output.contains("reset"), "\(drained.output)")
    }
}
