@testable import Folio
import Foundation
import Testing

/// A migration's progress, file by file, on a store of a few hundred files.
@Suite struct MigrationProgressTests {
    @Test("a dry run counts each partition file it reads; a migration too, then each file it stages and each it moves into place")
    func everyFileIsCounted() async throws {
        let folder = TemporaryFolder()
        try await storeOfAFewHundredFiles(in: folder)
        // A collection no step names: neither read nor counted.
        try folder.write(#"{"entities": {"N1": {"id": "N1", "text": "untouched"}}}"#, to: "notes.json")
        let dayFiles = folder.allFiles().filter { $0.hasPrefix("todos/") && $0.hasSuffix(".json") }.count
        #expect(dayFiles == 300)
        var migrator = Migrator()
        migrator.registerMigration("1-weather", [.setDefault("weather", .string("unknown"), in: "todos")])

        let dry = ProgressRecorder()
        let planned = try await migrator.dryRun(at: folder.url, progress: dry.handler)
        #expect(planned.collections.map(\.filesWritten) == [dayFiles], "every day file changes")
        dry.expectEveryUnit([(.migrating, dayFiles)])

        let migrated = ProgressRecorder()
        let report = try await migrator.migrate(at: folder.url, progress: migrated.handler)
        #expect(report == planned)
        #expect(report.commandsRewritten == 300)
        // The data files, the outbox's commands and folio.json.
        let written = dayFiles + report.commandsRewritten + report.commandsEnqueued + 1
        migrated.expectEveryUnit([(.migrating, dayFiles), (.staging, written), (.finishing, written)])
        #expect(try StoreFiles.entities(folder, "todos").values.allSatisfy { $0.json["weather"] as? String == "unknown" })

        let upToDate = ProgressRecorder()
        #expect(try await migrator.migrate(at: folder.url, progress: upToDate.handler).pending.isEmpty)
        #expect(upToDate.all.isEmpty, "nothing to migrate, nothing to count")
    }

    @Test("a migration that moves every file (repartitioned, renamed) counts each file it removes too")
    func removedFilesAreCounted() async throws {
        let folder = TemporaryFolder()
        try await storeOfAFewHundredFiles(in: folder)
        var migrator = Migrator()
        migrator.registerMigration("1-tasks-by-month", [.repartition("todos", by: .month), .renameCollection("todos", to: "tasks")])

        let migrated = ProgressRecorder()
        let report = try await migrator.migrate(at: folder.url, progress: migrated.handler)
        let removed = report.collections.map(\.filesRemoved).reduce(0, +)
        let written = report.collections.map(\.filesWritten).reduce(0, +) + report.commandsRewritten + report.commandsEnqueued + 1
        #expect(removed == 300 && folder.allFiles().filter { $0.hasPrefix("todos/") }.isEmpty)
        #expect(folder.allFiles().filter { $0.hasPrefix("tasks/") }.count == report.collections.map(\.filesWritten).reduce(0, +))
        // Read: the 300 day files of todos, and none of tasks (it had none).
        migrated.expectEveryUnit([(.migrating, 300), (.staging, written), (.finishing, written + removed)])
    }
}
