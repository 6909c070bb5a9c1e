import Folio
import Foundation

/// `folio outbox list [--all] [--json]|show N|retry N|drop N [DIR]`
enum OutboxCommands {
    static func run(_ raw: [String]) async throws -> Int32 {
        guard let action = raw.first else { throw UsageError("missing list, show, retry or drop") }
        let rest = Array(raw.dropFirst())
        switch action {
        case "list":
            let arguments = try Arguments(rest, flags: ["json", "all"])
            return try await list(
                CommandLineTool.folder(try arguments.positionals(min: 0, max: 1).first), json: arguments.flags.contains("json"),
                all: arguments.flags.contains("all"))
        case "show":
            let arguments = try Arguments(rest, flags: ["json"])
            let positionals = try arguments.positionals(min: 1, max: 2)
            return try await show(
                try CommandLineTool.sequence(positionals[0]), in: CommandLineTool.folder(positionals.dropFirst().first),
                json: arguments.flags.contains("json"))
        case "retry", "drop":
            let arguments = try Arguments(rest, flags: action == "drop" ? ["yes"] : [])
            let positionals = try arguments.positionals(min: 1, max: 2)
            let sequence = try CommandLineTool.sequence(positionals[0])
            let folder = CommandLineTool.folder(positionals.dropFirst().first)
            return action == "retry"
                ? try await retry(sequence, in: folder)
                : try await drop(sequence, in: folder, confirmed: arguments.flags.contains("yes"))
        default:
            throw UsageError("unknown outbox action '\(action)': use list, show, retry or drop")
        }
    }

    static func summary(_ command: OutboxCommand, attempts: CommandAttempts?) -> [String: Any] {
        var result: [String: Any] = [
            "sequence": command.sequence,
            "id": command.id,
            "operation": operationName(command.operation),
            "collection": jsonValue(command.collection),
            "entityID": jsonValue(command.entityID),
            "partition": jsonValue(command.partition),
            "baseVersion": jsonValue(command.baseVersion),
            "timestamp": Output.timestamp(command.timestamp),
        ]
        if case .custom(let name) = command.operation { result["name"] = name }
        if let attempts, attempts.count > 0 {
            result["attempts"] =
                [
                    "count": attempts.count,
                    "serverErrors": attempts.serverErrors,
                    "lastError": jsonValue(attempts.lastError),
                    "nextAttempt": jsonValue(attempts.nextAttempt.map(Output.timestamp)),
                ] as [String: Any]
        }
        return result
    }

    private static func operationName(_ operation: OutboxCommand.Operation) -> String {
        switch operation {
        case .upsert: return "upsert"
        case .delete: return "delete"
        case .custom: return "custom"
        }
    }

    static func describe(_ command: OutboxCommand) -> String {
        let target = [command.collection, command.entityID].compactMap { $0 }.joined(separator: "/")
        var text = "\(command.sequence)  \(Output.timestamp(command.timestamp))  "
        switch command.operation {
        case .upsert, .delete: text += "\(operationName(command.operation)) \(target)"
        case .custom(let name): text += "custom \(name)" + (target.isEmpty ? "" : " \(target)")
        }
        if let partition = command.partition, !partition.isEmpty { text += " [\(partition)]" }
        return text
    }

    /// The head of the queue (``StoreStatus/defaultPendingLimit`` commands), or every pending
    /// command with `all`, then the failed ones and the quarantined files.
    private static func list(_ folder: URL, json: Bool, all: Bool) async throws -> Int32 {
        let status = try await Store.status(at: folder, pendingLimit: all ? nil : StoreStatus.defaultPendingLimit)
        if json {
            try Output.json([
                "pendingCount": status.pendingCount,
                "pending": status.pending.map { summary($0, attempts: status.attempts[$0.sequence]) },
                "failed": status.failed.map { failed -> [String: Any] in
                    var entry = summary(failed.command, attempts: nil)
                    entry["reason"] = failed.reason
                    entry["status"] = jsonValue(failed.status)
                    entry["failedAt"] = jsonValue(failed.failedAt.map(Output.timestamp))
                    return entry
                },
                "quarantined": status.quarantined.filter { $0.hasPrefix("outbox/") },
            ])
            return CommandLineTool.success
        }
        Output.line("pending: \(status.pendingCount)")
        for command in status.pending {
            var line = "  " + describe(command)
            if let attempts = status.attempts[command.sequence], attempts.count > 0 {
                line += "  (\(attempts.count) failed attempt(s)"
                if let next = attempts.nextAttempt, next > Date() { line += ", waits until \(Output.timestamp(next))" }
                line += ": \(attempts.lastError?.prefix(120) ?? ""))"
            }
            Output.line(line)
        }
        if status.pendingCount > status.pending.count {
            Output.line("  … and \(status.pendingCount - status.pending.count) more (--all lists every one)")
        }
        // Why the queue does not move: its head waits out a backoff (the rest wait behind it).
        if let head = status.pending.first, let attempts = status.attempts[head.sequence],
            let next = attempts.nextAttempt, next > Date()
        {
            Output.line(
                "the queue waits: command \(head.sequence) is not sent again before \(Output.timestamp(next))"
                    + (attempts.lastError.map { " (last error: \($0.prefix(200)))" } ?? "")
                    + (status.pendingCount > 1 ? "; \(status.pendingCount - 1) command(s) wait behind it" : ""))
        }
        Output.line("failed: \(status.failed.count)")
        for failed in status.failed {
            Output.line("  " + describe(failed.command) + "  — " + (failed.status.map { "\($0) " } ?? "") + failed.reason)
        }
        let blocking = status.quarantined.filter { $0.hasPrefix("outbox/") }
        if !blocking.isEmpty {
            Output.line("quarantined (sending is blocked until each is repaired and moved back, or deleted): \(blocking.count)")
            for path in blocking { Output.line("  " + path) }
        }
        return CommandLineTool.success
    }

    private static func show(_ sequence: UInt64, in folder: URL, json: Bool) async throws -> Int32 {
        let status = try await Store.status(at: folder, pendingLimit: nil)
        guard let text = status.commandText(sequence) else {
            Output.error("folio outbox show: there is no pending or failed command \(sequence)")
            return CommandLineTool.problemsFound
        }
        let failed = status.failed.first { $0.command.sequence == sequence }
        let attempts = status.attempts[sequence]
        if json {
            var document: [String: Any] = ["state": failed == nil ? "pending" : "failed", "command": try Output.embedded(text)]
            if let failed { document["reason"] = try JSONSerialization.jsonObject(with: failed.details) }
            if let attempts {
                document["attempts"] = summary(failed?.command ?? status.pending.first { $0.sequence == sequence }!, attempts: attempts)["attempts"] ?? NSNull()
            }
            try Output.json(document)
            return CommandLineTool.success
        }
        Output.line("command \(sequence): \(failed == nil ? "pending" : "failed")")
        if let failed {
            Output.line(
                "reason: " + (failed.status.map { "\($0) " } ?? "") + failed.reason
                    + (failed.failedAt.map { " (at \(Output.timestamp($0)))" } ?? ""))
        }
        if let attempts, attempts.count > 0 {
            Output.line(
                "attempts: \(attempts.count)" + (attempts.lastError.map { ", last error: \($0)" } ?? "")
                    + (attempts.nextAttempt.map { ", next try \(Output.timestamp($0))" } ?? ""))
        }
        Output.line(text, terminator: "")
        return CommandLineTool.success
    }

    private static func retry(_ sequence: UInt64, in folder: URL) async throws -> Int32 {
        try CommandLineTool.requireStore(folder)
        let store = try await Store.open(at: folder)
        let outcome = await withClosing(store) { store in
            guard try await store.failedCommands().contains(where: { $0.command.sequence == sequence }) else { return false }
            try await store.retryFailedCommand(sequence)
            return true
        }
        guard try outcome.get() else {
            Output.error("folio outbox retry: there is no failed command \(sequence) (folio outbox list shows them)")
            return CommandLineTool.problemsFound
        }
        Output.line("command \(sequence) is back in the queue under its number; the next drain sends it")
        return CommandLineTool.success
    }

    private static func drop(_ sequence: UInt64, in folder: URL, confirmed: Bool) async throws -> Int32 {
        try CommandLineTool.requireStore(folder)
        let status = try await Store.status(at: folder, pendingLimit: nil)
        guard let failed = status.failed.first(where: { $0.command.sequence == sequence }) else {
            let pending = status.pending.contains { $0.sequence == sequence }
            Output.error(
                "folio outbox drop: there is no failed command \(sequence)"
                    + (pending ? " (it is pending: only failed commands can be dropped)" : ""))
            return CommandLineTool.problemsFound
        }
        if !confirmed {
            Output.progress(
                "Drop failed command \(describe(failed.command))?\nIts change never reaches the server: it is LOST for good. Type 'yes' to drop it: ")
            guard let answer = readLine(), answer.lowercased() == "yes" || answer.lowercased() == "y" else {
                Output.error("not dropped")
                return CommandLineTool.problemsFound
            }
        }
        let store = try await Store.open(at: folder)
        try await withClosing(store) { store in try await store.dropFailedCommand(sequence) }.get()
        Output.line("dropped command \(sequence): its change will never be sent")
        return CommandLineTool.success
    }
}

extension Output {
    static func line(_ text: String, terminator: String) {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }
}

/// Runs `body`, then closes the store whatever happened; a close failure is reported too.
func withClosing<T: Sendable>(_ store: Store, _ body: (Store) async throws -> T) async -> Result<T, any Error> {
    let result: Result<T, any Error>
    do { result = .success(try await body(store)) } catch { result = .failure(error) }
    do {
        try await store.close()
    } catch {
        if case .success = result { return .failure(error) }
        Output.error("folio: closing the store failed too: \(error)")
    }
    return result
}
