import Foundation
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Testing

/// The server SIGKILLed while it applies pushes: every change and its remembered key commit
/// together, so resending every request after a restart applies each exactly once.
@Suite struct CrashTests {
    /// A server process on a folder (or on PostgreSQL when `storage` names a database); returns
    /// it and its base URL.
    static func launch(_ folder: TemporaryFolder, name: String, storage: [String]? = nil) async throws -> (Process, URL) {
        let output = folder.sibling("\(name).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = try CommandLineTests.executable()
        process.arguments = ["--port", "0"] + (storage ?? ["--data", folder.url.path])
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = try await CommandLineTests.firstLine(of: output, process: process, seconds: 120)
        let base = try #require(line.flatMap { URL(string: String($0.dropFirst("listening on ".count))) })
        return (process, base)
    }

    @Test func aKilledServerForgetsNoKeyItApplied() async throws {
        try await killAndResend(storage: nil)
    }

    @Test(.enabled(if: TestPostgres.runs, TestPostgres.notRunReason))
    func aKilledServerOnPostgreSQLForgetsNoKeyItApplied() async throws {
        let settings = try await TestPostgres.shared.database()
        try await killAndResend(storage: ["--postgres", settings.urlForTests])
    }

    private func killAndResend(storage: [String]?) async throws {
        let folder = try TemporaryFolder()
        let requests: [(path: String, key: String, body: Data)] = try (0..<40).map { index in
            let todo = todoJSON(title: "t\(index)", date: "2026-11-\(10 + index % 5)", done: index % 2 == 0)
            return ("/api/todos/\(todo["id"] as? String ?? "")", newKey(), try JSONSerialization.data(withJSONObject: todo))
        }
        let (first, firstBase) = try await Self.launch(folder, name: "first", storage: storage)
        let client = HTTPClient(baseURL: firstBase)
        // Send concurrently and kill the server while answers are coming in.
        let sender = Task {
            await withTaskGroup(of: Void.self) { group in
                for request in requests {
                    group.addTask {
                        do {
                            _ = try await client.send(
                                "PUT", request.path, headers: ["Idempotency-Key": request.key, "If-None-Match": "*"],
                                body: request.body)
                        } catch {
                            // Expected for the requests the kill cut off: they are sent again below.
                        }
                    }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(150))
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        await sender.value

        let (second, secondBase) = try await Self.launch(folder, name: "second", storage: storage)
        defer { if second.isRunning { second.terminate() } }
        let retry = HTTPClient(baseURL: secondBase)
        for request in requests {
            let answer = try await retry.send("PUT", request.path, headers: ["Idempotency-Key": request.key, "If-None-Match": "*"], body: request.body)
            // 412 would mean the change was kept but its key forgotten.
            #expect(answer.status == 201, "\(request.path): \(answer.text)")
        }
        let stats = try await retry.get("/api/dailyStats?partition=2026-11")
        let entities = stats.object["entities"] as? [[String: Any]] ?? []
        let totals = entities.map { ($0["entity"] as? [String: Any])?["total"] as? Int ?? 0 }
        #expect(totals == [8, 8, 8, 8, 8])
        kill(second.processIdentifier, SIGTERM)
        second.waitUntilExit()
        #expect(second.terminationStatus == 0)
    }
}
