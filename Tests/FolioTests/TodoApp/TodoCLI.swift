import FolioTestServer
import Foundation
import Testing

/// Runs the built `todo` example app (Examples/TodoApp) on a data folder in a temp folder, as a
/// user would: a real process per command, output collected from files.
final class TodoCLI: @unchecked Sendable {
    let folder = TemporaryFolder("TodoAppData")
    private var runs = 0

    var logs: URL { folder.url.deletingLastPathComponent() }

    /// What one run printed, and how it ended.
    struct Outcome {
        var status: Int32
        var output: String
        var errors: String
        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    /// Starts `todo ARGS --data FOLDER` without waiting for it.
    func start(_ arguments: [String]) throws -> CrashChild {
        runs += 1
        return try CrashChild(arguments + ["--data", folder.url.path], logs: logs, name: "todo-\(runs)", executable: "todo")
    }

    /// Runs `todo ARGS --data FOLDER` to its end (at most 60 s, then it is killed and the test fails).
    @discardableResult
    func run(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> Outcome {
        try await run(arguments, sourceLocation: sourceLocation)
    }

    @discardableResult
    func run(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> Outcome {
        let child = try start(arguments)
        let finished = await child.waitForExit(before: .now + .seconds(60))
        if !finished { child.kill() }
        try #require(finished, "todo \(arguments.joined(separator: " ")) did not finish", sourceLocation: sourceLocation)
        let output = try String(contentsOf: child.output, encoding: .utf8)
        return Outcome(status: child.process.terminationStatus, output: output, errors: child.errorText)
    }

    /// Runs a command that must succeed, and returns its output lines.
    @discardableResult
    func ok(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        let outcome = try await run(arguments, sourceLocation: sourceLocation)
        #expect(outcome.status == 0, "todo \(arguments.joined(separator: " ")): \(outcome.errors)", sourceLocation: sourceLocation)
        return outcome.lines
    }

    /// Adds a todo and returns its full id, found by its title in `todo export`.
    func add(_ title: String, _ options: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        try await run(["add", title] + options).expectSuccess(sourceLocation: sourceLocation)
        let todos = try await export().todos.filter { $0["title"] as? String == title }
        try #require(todos.count == 1, "one todo titled \(title)", sourceLocation: sourceLocation)
        return try #require(todos[0]["id"] as? String, sourceLocation: sourceLocation)
    }

    /// `todo export --json`, parsed.
    func export(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Export {
        let outcome = try await run(["export", "--json"], sourceLocation: sourceLocation)
        try outcome.expectSuccess(sourceLocation: sourceLocation)
        let object = try #require(JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any], sourceLocation: sourceLocation)
        return Export(object: object)
    }

    struct Export {
        var object: [String: Any]
        var todos: [[String: Any]] { object["todos"] as? [[String: Any]] ?? [] }
        var tags: [[String: Any]] { object["tags"] as? [[String: Any]] ?? [] }
        func todo(_ id: String) -> [String: Any]? { todos.first { $0["id"] as? String == id } }
    }

    /// The DailyStats of a month, from `dailyStats/YYYY-MM.json` (up to date: every run closes
    /// the store), by day.
    func stats(_ month: String) throws -> [String: [String: Any]] {
        guard folder.exists("dailyStats/\(month).json") else { return [:] }
        let file = try JSONSerialization.jsonObject(with: folder.bytes("dailyStats/\(month).json")) as? [String: Any]
        return file?["entities"] as? [String: [String: Any]] ?? [:]
    }

    /// The numbers of the commands waiting in `outbox/`, in order.
    func outbox() throws -> [UInt64] {
        try FileManager.default.contentsOfDirectory(atPath: folder.file("outbox").path)
            .filter { $0.hasSuffix(".json") }.compactMap { UInt64($0.dropLast(5)) }.sorted()
    }
}

extension TodoCLI.Outcome {
    func expectSuccess(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(status == 0, "todo failed (\(status)): \(errors)", sourceLocation: sourceLocation)
    }
}

extension TestServer {
    /// What the server holds, in the shape of `todo export --json`.
    func todoExport() throws -> [String: Any] {
        func sorted(_ collection: String) throws -> [Any] {
            try entities(collection).sorted { $0.key < $1.key }.map { try JSONSerialization.jsonObject(with: $0.value.json) }
        }
        return ["tags": try sorted("tags"), "todos": try sorted("todos")]
    }
}

/// A DailyStat's numbers, for comparisons: total, completed, and tagID: count.
func summary(_ stat: [String: Any]?) -> String {
    guard let stat else { return "none" }
    let tags = (stat["tagStats"] as? [[String: Any]] ?? []).map { "\($0["tagID"] as? String ?? "?"):\($0["count"] as? Int ?? -1)" }
    return "\(stat["completed"] as? Int ?? -1)/\(stat["total"] as? Int ?? -1)" + (tags.isEmpty ? "" : " " + tags.joined(separator: " "))
}
