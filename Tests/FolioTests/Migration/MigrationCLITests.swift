@testable import Folio
import Foundation
import Testing

/// `folio migrate` and the schema in `folio status`, run as a person would.
@Suite struct MigrationCLITests {
    @Test func migrateDryRunThenRunThenRefuseAnOlderPlan() async throws {
        let folder = TemporaryFolder()
        _ = try await MigrationStepTests.makeStore(folder, seed: 21, count: 6)
        let plans = folder.url.deletingLastPathComponent()
        let plan = plans.appendingPathComponent("plan.json"), older = plans.appendingPathComponent("older.json")
        try Data(
            """
            {"migrations": [
              {"name": "1-text", "steps": [{"renameField": "title", "to": "text", "in": "entries"}]},
              {"name": "2-weather", "steps": [{"setDefault": "weather", "value": "unknown", "in": "entries"},
                                             {"convertField": "mood", "to": "number", "in": "entries"}]}
            ]}
            """.utf8
        ).write(to: plan)
        try Data(#"{"migrations": [{"name": "1-text", "steps": []}]}"#.utf8).write(to: older)
        let before = try StoreFiles.snapshot(folder)

        let dry = try await FolioTool.run(["migrate", "--plan", plan.path, "--dry-run", folder.url.path])
        #expect(dry.code == 0 && dry.output.contains("2 pending migration(s) to schema version 2: 1-text, 2-weather"), "\(dry)")
        #expect(dry.output.contains("entries: 6 entities changed"), "\(dry.output)")
        #expect(try StoreFiles.snapshot(folder) == before, "a dry run writes nothing")
        let fresh = try await FolioTool.run(["status", "--plan", plan.path, folder.url.path])
        #expect(fresh.output.contains("schema: version 0") && fresh.output.contains("pending migrations: 1-text, 2-weather"), "\(fresh.output)")

        let run = try await FolioTool.run(["migrate", "--plan", plan.path, folder.url.path])
        #expect(run.code == 0 && run.output.hasPrefix("migrated: 2 pending migration(s)"), "\(run)")
        let status = try await FolioTool.run(["status", folder.url.path])
        #expect(status.output.contains("schema: version 2 (1-text, 2-weather)"), "\(status.output)")
        let json = try FolioTool.json(try await FolioTool.run(["status", "--json", folder.url.path]).output)
        #expect((json["schema"] as? [String: Any])?["version"] as? Int == 2)
        #expect(try StoreFiles.entities(folder, "entries").values.allSatisfy { $0.json["text"] is String && $0.json["mood"] is Int })

        let after = try StoreFiles.snapshot(folder)
        let refused = try await FolioTool.run(["migrate", "--plan", older.path, folder.url.path])
        #expect(refused.code == 1 && refused.errors.contains("newer version of the app"), "\(refused)")
        #expect(try StoreFiles.snapshot(folder) == after, "a newer store is never rewritten")
        #expect(try await FolioTool.run(["migrate", folder.url.path]).code == 2)
        let verify = try await FolioTool.run(["verify", folder.url.path])
        #expect(verify.code == 0, "\(verify.output)")
    }
}
