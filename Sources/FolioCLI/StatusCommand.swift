import Folio
import Foundation

/// `folio status [--verify] [--json] [--plan PLAN] [DIR]`
enum StatusCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: ["json", "verify"], options: ["plan"])
        let folder = CommandLineTool.folder(try arguments.positionals(min: 0, max: 1).first)
        let status = try await Store.status(at: folder, verify: arguments.flags.contains("verify"), pendingLimit: 1)
        let schema = try await Store.schema(at: folder)
        // The pending migrations are the app's: known here only from a migration plan.
        var pending: [String]?
        if let path = arguments.option("plan") {
            pending = try await Migrator(plan: try Data(contentsOf: URL(fileURLWithPath: path))).pendingMigrations(at: folder)
        }
        if arguments.flags.contains("json") {
            var document = json(status)
            document["schema"] =
                [
                    "version": schema.version, "migrations": schema.migrations,
                    "interruptedMigration": schema.interruptedMigration?.rawValue ?? NSNull(),
                    "pendingMigrations": pending.map { $0 as Any } ?? NSNull(),
                ] as [String: Any]
            try Output.json(document)
        } else {
            print(status, folder: folder)
            Output.line(schemaLine(schema))
            if let pending { Output.line("  pending migrations: " + (pending.isEmpty ? "none" : pending.joined(separator: ", "))) }
        }
        let healthy = status.verification?.isHealthy ?? !status.problems.contains { $0.severity == .error }
        let troubled = !healthy || !status.failed.isEmpty || !status.quarantined.isEmpty
        return troubled ? CommandLineTool.problemsFound : CommandLineTool.success
    }

    private static func print(_ status: StoreStatus, folder: URL) {
        Output.line("store \(status.storeID ?? "?") (format \(status.format.map(String.init) ?? "?")) at \(folder.path)")
        if status.collections.isEmpty { Output.line("no collections yet") }
        for collection in status.collections {
            var line = "  \(collection.name): \(collection.entities) entit\(collection.entities == 1 ? "y" : "ies")"
            if collection.granularity != .none {
                line += " in \(collection.partitions) \(collection.granularity.rawValue) partition\(collection.partitions == 1 ? "" : "s")"
                if let first = collection.firstPartition, let last = collection.lastPartition {
                    line += first == last ? " (\(first))" : " (\(first) … \(last))"
                }
            } else {
                line += " (one file)"
            }
            Output.line(line)
        }
        var outbox = "outbox: \(status.pendingCount) pending, \(status.failed.count) failed"
        let blocking = status.quarantined.filter { $0.hasPrefix("outbox/") }
        if !blocking.isEmpty { outbox += ", \(blocking.count) quarantined command file(s) (sending is blocked: see folio verify)" }
        Output.line(outbox)
        let data = status.quarantined.count - blocking.count
        if data > 0 { Output.line("quarantine: \(data) unreadable file(s) moved to .folio/quarantine/ wait for repair (see folio verify)") }
        if let head = status.pending.first {
            var line = "  next: " + OutboxCommands.describe(head)
            if let attempts = status.attempts[head.sequence], attempts.count > 0 {
                line += ", \(attempts.count) failed attempt(s)"
                if let error = attempts.lastError { line += ", last: \(error.prefix(120))" }
                if let next = attempts.nextAttempt { line += ", next try \(Output.timestamp(next))" }
            }
            Output.line(line)
        }
        let journal = status.journal
        var journalLine = "journal: \(journal.bytes) bytes"
        journalLine += journal.pendingTransactions == 0 ? ", nothing waiting" : ", \(journal.pendingTransactions) committed transaction(s) not yet in the files"
        if journal.tornBytes > 0 { journalLine += ", \(journal.tornBytes) bytes of torn tail (a crash; dropped on next open)" }
        Output.line(journalLine)
        if let last = status.lastSent {
            Output.line("last sync: command \(last.sequence) sent, archived \(Output.timestamp(last.archivedAt))")
        } else {
            Output.line("last sync: no sent command archived")
        }
        for (collection, cursor) in status.pullCursors.sorted(by: { $0.key < $1.key }) {
            Output.line("  pull cursor \(collection): \(cursor)")
        }
        if let verification = status.verification {
            Output.line("verify: " + VerifyCommand.summary(verification) + (verification.problems.isEmpty ? "" : " (folio verify lists them)"))
        } else {
            let met = status.problems.filter { $0.severity != .note }
            Output.line(
                "not verified: run folio verify (or folio status --verify) to check every file"
                    + (met.isEmpty ? "" : "; \(met.count) problem(s) met on the way (folio verify lists them)"))
        }
    }

    private static func json(_ status: StoreStatus) -> [String: Any] {
        [
            "store": jsonValue(status.storeID),
            "format": jsonValue(status.format),
            "collections": status.collections.map { collection -> [String: Any] in
                [
                    "name": collection.name,
                    "granularity": collection.granularity.rawValue,
                    "partitions": collection.partitions,
                    "entities": collection.entities,
                    "firstPartition": jsonValue(collection.firstPartition),
                    "lastPartition": jsonValue(collection.lastPartition),
                ]
            },
            "outbox": [
                "pending": status.pendingCount,
                "failed": status.failed.count,
                "quarantined": status.quarantined,
                "next": jsonValue(status.pending.first.map { OutboxCommands.summary($0, attempts: status.attempts[$0.sequence]) }),
            ] as [String: Any],
            "journal": [
                "bytes": status.journal.bytes,
                "pendingTransactions": status.journal.pendingTransactions,
                "tornBytes": status.journal.tornBytes,
                "generation": jsonValue(status.journal.generation),
            ] as [String: Any],
            "lastSent": jsonValue(status.lastSent.map { ["sequence": $0.sequence, "archivedAt": Output.timestamp($0.archivedAt)] as [String: Any] }),
            "pullCursors": status.pullCursors,
            "verified": status.verification != nil,
            "problems": [
                "errors": status.problems.filter { $0.severity == .error }.count,
                "warnings": status.problems.filter { $0.severity == .warning }.count,
                "notes": status.problems.filter { $0.severity == .note }.count,
            ],
        ]
    }
}
