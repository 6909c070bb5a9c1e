import Foundation
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Testing

/// The `folio-sync-server` executable as scripts use it.
@Suite struct CommandLineTests {
    /// The executable in the build products folder, next to the test binary (Linux) or the
    /// `.xctest` bundle (macOS).
    static func executable() throws -> URL { try executable(named: "folio-sync-server") }

    /// One of this package's executables, in the build products folder.
    static func executable(named name: String) throws -> URL {
        var folders: [URL] = []
        for base in [URL(fileURLWithPath: CommandLine.arguments[0]), Bundle.main.bundleURL] {
            var folder = base.deletingLastPathComponent()
            for _ in 0..<3 {
                folders.append(folder)
                folder = folder.deletingLastPathComponent()
            }
        }
        guard let found = folders.first(where: { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent(name).path) }) else {
            throw NotBuilt(name: name, searched: folders.map(\.path))
        }
        return found.appendingPathComponent(name)
    }

    struct NotBuilt: Error, CustomStringConvertible {
        var name: String
        var searched: [String]
        var description: String { "\(name) is not built (swift build --package-path Examples/SyncServer); looked in \(searched)" }
    }

    /// Reads the output file until it holds a complete first line, for at most `seconds`.
    static func firstLine(of file: URL, process: Process, seconds: Int) async throws -> String? {
        for _ in 0..<(seconds * 20) {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            if let newline = text.firstIndex(of: "\n") { return String(text[..<newline]) }
            if !process.isRunning { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test func itPrintsOneListeningLineServesAndStopsCleanlyOnSIGTERM() async throws {
        let folder = try TemporaryFolder()
        let output = folder.sibling("out.txt"), errors = folder.sibling("err.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = ["--port", "0", "--data", folder.url.path, "--token", "t0ken"]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        let first = try await Self.firstLine(of: output, process: process, seconds: 120)
        let startErrors = String(decoding: try Data(contentsOf: errors), as: UTF8.self)
        let line = try #require(first, "no listening line; stderr: \(startErrors)")
        #expect(line.hasPrefix("listening on http://127.0.0.1:"))
        #expect(line.hasSuffix("/api/"))
        let base = try #require(URL(string: String(line.dropFirst("listening on ".count))))
        let port = try #require(base.port)
        #expect(port > 0)

        let client = HTTPClient(baseURL: base)
        let unauthorized = try await client.get("/api/todos?since=")
        #expect(unauthorized.status == 401)
        let todo = todoJSON()
        let put = try await client.send(
            "PUT", "/api/todos/\(todo["id"] as? String ?? "")",
            headers: ["Authorization": "Bearer t0ken", "Idempotency-Key": newKey()], json: todo)
        #expect(put.status == 201)

        kill(process.processIdentifier, SIGTERM)
        for _ in 0..<600 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!process.isRunning)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        let stopErrors = String(decoding: try Data(contentsOf: errors), as: UTF8.self)
        #expect(process.terminationStatus == 0, "stderr: \(stopErrors)")
        // Exactly one line on standard output.
        let all = String(decoding: try Data(contentsOf: output), as: UTF8.self)
        #expect(all == line + "\n")
        // Closed cleanly: the journal was checkpointed into the files.
        #expect(folder.exists("todos/2026-11/2026-11-22.json"))
        #expect(folder.exists("folio.json"))
    }

    @Test func helpAndMistakes() async throws {
        let help = try Self.run(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("--port"))
        #expect(help.output.contains("--data"))
        #expect(help.output.contains("--token"))
        let mistake = try Self.run(["--port", "http"])
        #expect(mistake.status == 2)
        #expect(mistake.errors.contains("--port"))
        #expect(try Self.run(["--frobnicate"]).status == 2)
    }

    /// Runs the executable to completion (it must exit by itself).
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let folder = try TemporaryFolder()
        let output = folder.sibling("out.txt"), errors = folder.sibling("err.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: try Data(contentsOf: output), as: UTF8.self),
            String(decoding: try Data(contentsOf: errors), as: UTF8.self)
        )
    }
}
