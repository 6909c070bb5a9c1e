@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// Each kind of migration on real files, checked against a model of the spec written here.
@Suite struct MigrationStepTests {
    /// The app's first model of a diary entry.
    struct EntryV1: Entity {
        static let collection = "entries"
        static let partitioning = Partitioning<EntryV1>.day(\.date)
        var id: String
        var date: String
        var title: String
        var mood: String
        var draft = false
    }

    struct Tag: Entity {
        static let collection = "tags"
        static let partitioning = Partitioning<Tag>.none
        var id: String
        var name: String
    }

    static func makeStore(_ folder: TemporaryFolder, seed: UInt64, count: Int = 40) async throws -> [EntryV1] {
        var random = SplitMix64(seed: seed)
        let entries = (0..<count).map { index in
            EntryV1(
                id: "E\(index)", date: String(format: "2026-0%d-%02d", Int.random(in: 1...3, using: &random), Int.random(in: 1...28, using: &random)),
                title: "entry \(index)", mood: String(Int.random(in: 1...5, using: &random)), draft: Bool.random(using: &random))
        }
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in
            for entry in entries { try tx.upsert(entry) }
            for name in ["home", "work", "Work", "travel"] { try tx.upsert(Tag(id: name, name: name.lowercased())) }
        }
        try await store.close()
        return entries
    }

    /// A random sequence of field steps against a model of each: rename (an error if an entity
    /// has both names, which must then change nothing at all), remove, default, type change.
    @Test func randomFieldStepsMatchTheModel() async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        for round in 0..<4 {
            let folder = TemporaryFolder()
            _ = try await Self.makeStore(folder, seed: seed &+ UInt64(round))
            var model = try StoreFiles.entities(folder, "entries").mapValues(\.json)
            let before = try StoreFiles.snapshot(folder)
            var steps: [MigrationStep] = []
            var fails = false
            let names = ["title", "mood", "draft", "text", "note", "weather"]
            for _ in 0..<Int.random(in: 2...6, using: &random) {
                let field = names.randomElement(using: &random)!
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    let target = names.randomElement(using: &random)!
                    guard target != field else { continue }
                    steps.append(.renameField(field, to: target, in: "entries"))
                    for (id, var json) in model {
                        guard let value = json.removeValue(forKey: field) else { continue }
                        if json[target] != nil { fails = true }
                        json[target] = value
                        model[id] = json
                    }
                case 1:
                    steps.append(.removeField(field, in: "entries"))
                    for id in model.keys { model[id]![field] = nil }
                case 2:
                    steps.append(.setDefault(field, .string("unknown"), in: "entries"))
                    for id in model.keys where model[id]![field] == nil || model[id]![field] is NSNull { model[id]![field] = "unknown" }
                default:
                    // A string holding a number becomes that number; anything else stays.
                    steps.append(
                        .changeField(field, in: "entries") { value in
                            if case .string(let text)? = value, Int(text) != nil { return .number(text) }
                            return value
                        })
                    for (id, json) in model { if let text = json[field] as? String, let number = Int(text) { model[id]![field] = number } }
                }
            }
            var migrator = Migrator()
            migrator.registerMigration("1-fields", steps)
            do {
                let store = try await StoreFiles.open(folder, migrator)
                try await store.close()
                #expect(!fails, "seed \(seed) round \(round): the migration should have failed")
                let stored = try StoreFiles.entities(folder, "entries")
                #expect(stored.count == model.count)
                for (id, json) in model { #expect(canonical(stored[id]!.json) == canonical(json), "seed \(seed) round \(round): \(id)") }
                #expect(try StoreFiles.migrations(folder) == ["1-fields"])
            } catch let error as FolioError {
                #expect(fails && error.code == .migrationFailed, "seed \(seed) round \(round): \(error)")
                #expect(try StoreFiles.snapshot(folder) == before, "a failed migration changes nothing")
            }
        }
        print("migration field steps test: seed \(seed), 4 rounds")
    }

    @Test func splitMergeMoveRepartitionRenameAndRunOnce() async throws {
        let folder = TemporaryFolder()
        let entries = try await Self.makeStore(folder, seed: 7)
        var migrator = Migrator()
        // Split: each entry's mood becomes an entity of its own collection, by month.
        migrator.registerMigration("1-split-moods") { db in
            for entry in try db.entities(in: "entries") {
                var rest = entry
                let mood = rest.fields.removeValue(forKey: "mood")!
                try db.upsert(rest)
                try db.upsert(
                    MigratingEntity(
                        id: "mood-" + entry.id, collection: "moods", partition: String(entry.partition.prefix(7)),
                        fields: ["id": .string("mood-" + entry.id), "entry": .string(entry.id), "value": mood]))
            }
        }
        // Merge: tags whose names are equal become one.
        migrator.registerMigration("2-merge-tags") { db in
            var seen: [String: String] = [:]
            for tag in try db.entities(in: "tags") {
                let name = tag.fields["name"]!.stringValue!
                if seen[name] != nil { try db.delete(id: tag.id, from: "tags") } else { seen[name] = tag.id }
            }
        }
        // Move: entries of March move to the first of their month.
        migrator.registerMigration("3-move", [.moveEntities(in: "entries") { $0.partition.hasPrefix("2026-03") ? "2026-03-01" : $0.partition }])
        // Repartition the entries by month, and rename the collection.
        migrator.registerMigration("4-by-month", [.repartition("entries", by: .month), .renameCollection("entries", to: "journal")])
        // Runs once: a step that counts its runs in the data.
        migrator.registerMigration("5-count", [.changeField("runs", in: "tags") { .number(String(($0?.integerValue ?? 0) + 1)) }])
        for _ in 0..<2 {
            let store = try await StoreFiles.open(folder, migrator)
            try await store.close()
        }
        // The model.
        let journal = try StoreFiles.entities(folder, "journal")
        #expect(journal.count == entries.count && !folder.exists("entries"))
        for entry in entries {
            let stored = try #require(journal[entry.id])
            #expect(stored.path == "journal/\(entry.date.prefix(7)).json")
            #expect(stored.json["mood"] == nil && stored.json["title"] as? String == entry.title)
            let expectedDate = entry.date   // fields are not touched by a move
            #expect(stored.json["date"] as? String == expectedDate)
        }
        let moods = try StoreFiles.entities(folder, "moods")
        #expect(moods.count == entries.count)
        for entry in entries {
            #expect(
                moods["mood-" + entry.id]?.json["value"] as? String == entry.mood && moods["mood-" + entry.id]?.path == "moods/\(entry.date.prefix(7)).json")
        }
        let tags = try StoreFiles.entities(folder, "tags")
        #expect(Set(tags.keys) == ["home", "travel", "Work"] || Set(tags.keys) == ["home", "travel", "work"])
        #expect(tags.values.allSatisfy { $0.json["runs"] as? Int == 1 }, "each migration runs once")
        #expect(try StoreFiles.migrations(folder) == ["1-split-moods", "2-merge-tags", "3-move", "4-by-month", "5-count"])
        // A day partition folder left empty is gone; the store verifies clean.
        #expect(!folder.allFiles().contains { $0.hasPrefix("journal/2026-0") && $0.split(separator: "/").count > 2 })
        let report = try await Store.verify(at: folder.url)
        #expect(report.errors.isEmpty, "\(report.errors)")
    }

    /// The typed migration: the old Swift type decodes, the new one is written; fields neither
    /// type knows survive.
    @Test func typedConversionKeepsUnknownFields() async throws {
        struct EntryV2: Entity {
            static let collection = "entries"
            static let partitioning = Partitioning<EntryV2>.month(\.month)
            var id: String
            var month: String
            var day: Int
            var text: String
            var mood: Int
        }
        let folder = TemporaryFolder()
        let entries = try await Self.makeStore(folder, seed: 11, count: 12)
        // A field added by hand, unknown to both types.
        let first = try StoreFiles.entities(folder, "entries")["E0"]!
        var file = try JSONSerialization.jsonObject(with: folder.bytes(first.path)) as! [String: Any]
        var members = file["entities"] as! [String: Any]
        var e0 = members["E0"] as! [String: Any]
        e0["handwritten"] = "keep me"
        members["E0"] = e0
        file["entities"] = members
        try JSONSerialization.data(withJSONObject: file).write(to: folder.file(first.path))
        var migrator = Migrator()
        migrator.registerMigration(
            "1-typed",
            [
                .convert(EntryV1.self, from: "entries", to: EntryV2.self) { old in
                    EntryV2(id: old.id, month: String(old.date.prefix(7)), day: Int(old.date.suffix(2))!, text: old.title, mood: Int(old.mood)!)
                }
            ])
        let store = try await StoreFiles.open(folder, migrator)
        let all = try await store.fetch(Query<EntryV2>())
        #expect(all.count == entries.count)
        for entry in entries {
            let new = try #require(try await store.get(EntryV2.self, id: entry.id))
            #expect(new.text == entry.title && new.mood == Int(entry.mood)! && new.month == String(entry.date.prefix(7)))
        }
        try await store.close()
        let stored = try StoreFiles.entities(folder, "entries")
        #expect(stored["E0"]?.json["handwritten"] as? String == "keep me")
        #expect(stored["E0"]?.json["title"] == nil && stored["E0"]?.json["date"] == nil, "fields the old type knew are not carried over")
        #expect(stored.values.allSatisfy { $0.path.split(separator: "/").count == 2 })
    }

    @Test func newerStoresAreRefusedAndNeverRewritten() async throws {
        let folder = TemporaryFolder()
        _ = try await Self.makeStore(folder, seed: 3, count: 5)
        var newer = Migrator()
        newer.registerMigration("1-a", [.setDefault("weather", .string("sun"), in: "entries")])
        newer.registerMigration("2-b", [.removeField("draft", in: "entries")])
        try await StoreFiles.open(folder, newer).close()
        let before = try StoreFiles.snapshot(folder)
        var older = Migrator()
        older.registerMigration("1-a", [.setDefault("weather", .string("sun"), in: "entries")])
        await #expect(throws: FolioError.self) { try await StoreFiles.open(folder, older) }
        do { _ = try await StoreFiles.open(folder, older) } catch let error as FolioError {
            #expect(error.code == .newerSchema && error.message.contains("newer version of the app"), "\(error)")
        }
        var other = Migrator()
        other.registerMigration("1-x", [])
        await #expect(throws: FolioError.self) { try await other.dryRun(at: folder.url) }
        #expect(try StoreFiles.snapshot(folder) == before)
        var duplicate = Migrator()
        duplicate.registerMigration("1-a", [])
        duplicate.registerMigration("1-a", [])
        do { _ = try await StoreFiles.open(folder, duplicate) } catch let error as FolioError {
            #expect(error.code == .migrationFailed && error.message.contains("registered twice"))
        }
    }

    @Test func dryRunSaysWhatWouldChangeAndWritesNothing() async throws {
        let folder = TemporaryFolder()
        let entries = try await Self.makeStore(folder, seed: 5, count: 10)
        var migrator = Migrator()
        migrator.registerMigration("1-rename", [.renameField("title", to: "text", in: "entries"), .renameCollection("tags", to: "labels")])
        let before = try StoreFiles.snapshot(folder)
        let report = try await migrator.dryRun(at: folder.url)
        #expect(try StoreFiles.snapshot(folder) == before)
        #expect(report.pending == ["1-rename"] && report.schemaVersion == 1)
        let days = Set(entries.map(\.date)).count
        #expect(report.collections.first { $0.name == "entries" }.map { ($0.entitiesChanged, $0.filesWritten) }! == (10, days))
        #expect(report.collections.first { $0.name == "tags" }?.filesRemoved == 1)
        #expect(report.collections.first { $0.name == "labels" }?.filesWritten == 1)
        #expect(report.description.contains("1 pending migration(s) to schema version 1"))
    }

    /// A staging folder without its commit record is what a crash before the commit leaves: the
    /// next open deletes it and the store is the old one.
    @Test func uncommittedStagingIsDiscarded() async throws {
        let folder = TemporaryFolder()
        _ = try await Self.makeStore(folder, seed: 9, count: 3)
        let before = try StoreFiles.snapshot(folder)
        try folder.write("{\"entities\": {}}\n", to: ".folio/migration/staged/entries/2026-01/2026-01-01.json")
        #expect(try await Store.schema(at: folder.url).interruptedMigration == .uncommitted)
        try await Store.open(at: folder.url, configuration: .testing()).close()
        #expect(!folder.exists(".folio/migration"))
        #expect(try StoreFiles.snapshot(folder) == before)
    }

    /// A new store starts at the app's schema version: its migrations are recorded, none has data
    /// to change, and the next open runs nothing.
    @Test func aNewStoreStartsAtTheCurrentSchema() async throws {
        let folder = TemporaryFolder()
        var migrator = Migrator()
        migrator.registerMigration("1-a", [.renameField("title", to: "text", in: "entries")])
        migrator.registerMigration("2-b", [.renameCollection("tags", to: "labels")])
        let store = try await StoreFiles.open(folder, migrator)
        try await store.write { tx in try tx.upsert(Tag(id: "t", name: "home")) }
        try await store.close()
        #expect(try StoreFiles.migrations(folder) == ["1-a", "2-b"])
        #expect(try await migrator.pendingMigrations(at: folder.url).isEmpty)
        try await StoreFiles.open(folder, migrator).close()
        #expect(folder.exists("tags.json"), "no migration ran again")
    }

    /// A committed migration that a crash interrupted is finished by the next read-write open; a
    /// read-only open (a widget) cannot finish it, and refuses rather than serve half of it.
    @Test func aReadOnlyOpenRefusesAnUnfinishedMigration() async throws {
        let folder = TemporaryFolder()
        _ = try await Self.makeStore(folder, seed: 4, count: 3)
        let day = try #require(try StoreFiles.entities(folder, "entries")["E0"]?.path)
        try folder.write("{\"entities\": {}}\n", to: ".folio/migration/staged/" + day)
        try folder.write("{\"collections\": [\"entries\"], \"removes\": [], \"writes\": [\"\(day)\"]}\n", to: ".folio/migration/commit.json")
        var readOnly = Store.Configuration.testing()
        readOnly.readOnly = true
        do {
            _ = try await Store.open(at: folder.url, configuration: readOnly)
            Issue.record("a read-only open should refuse an unfinished migration")
        } catch let error as FolioError {
            #expect(error.code == .readOnly, "\(error)")
        }
        #expect(try await Store.schema(at: folder.url).interruptedMigration == .committed)
        try await Store.open(at: folder.url, configuration: .testing()).close()
        #expect(!folder.exists(".folio/migration"))
        #expect(try folder.text(day) == "{\"entities\": {}}\n", "finished: the staged partition replaced the file")
    }
}
