import Folio
import Foundation

/// `folio migrate [--plan FILE] [--dry-run] [--json] [DIR]`
enum MigrateCommand {
    static func run(_ raw: [String]) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: ["dry-run", "json"], options: ["plan"])
        let folder = CommandLineTool.folder(try arguments.positionals(min: 0, max: 1).first)
        try CommandLineTool.requireStore(folder)
        let schema = try await Store.schema(at: folder)
        guard let planPath = arguments.option("plan") else {
            guard arguments.flags.contains("dry-run") else {
                throw UsageError("give the migrations with --plan FILE (the app's own migrations run when it opens the store)")
            }
            Output.line(StatusCommand.schemaLine(schema))
            return CommandLineTool.success
        }
        let migrator = try Migrator(plan: try Data(contentsOf: URL(fileURLWithPath: planPath)))
        if arguments.flags.contains("dry-run") {
            let report = try await ProgressLine.during("migrate") { progress in try await migrator.dryRun(at: folder, progress: progress) }
            if arguments.flags.contains("json") { try Output.json(json(report)) } else { Output.line("dry run: " + report.description) }
            return CommandLineTool.success
        }
        let report = try await ProgressLine.during("migrate") { progress in try await migrator.migrate(at: folder, progress: progress) }
        if arguments.flags.contains("json") { try Output.json(json(report)) } else { Output.line("migrated: " + report.description) }
        return CommandLineTool.success
    }

    static func json(_ report: MigrationReport) -> [String: Any] {
        [
            "pending": report.pending,
            "schemaVersion": report.schemaVersion,
            "collections": report.collections.map { collection -> [String: Any] in
                [
                    "name": collection.name, "entitiesChanged": collection.entitiesChanged, "entitiesRemoved": collection.entitiesRemoved,
                    "filesWritten": collection.filesWritten, "filesRemoved": collection.filesRemoved,
                ]
            },
            "commandsRewritten": report.commandsRewritten,
            "commandsKept": report.commandsKept,
            "commandsEnqueued": report.commandsEnqueued,
        ]
    }
}

extension StatusCommand {
    /// `schema: version 2 (1-weather, 2-mood)`, and an interrupted migration if there is one.
    static func schemaLine(_ schema: StoreSchema) -> String {
        var line = "schema: version \(schema.version)"
        if !schema.migrations.isEmpty { line += " (\(schema.migrations.joined(separator: ", ")))" }
        switch schema.interruptedMigration {
        case .committed?: line += "; a migration was interrupted after it committed: the next open finishes it"
        case .uncommitted?: line += "; a migration was interrupted before it committed: the next open discards it"
        case nil: break
        }
        return line
    }
}
