@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// Reads apply verify's per-entity checks (FORMAT.md, "Partition files" and "Editing by hand"):
/// an entity whose `id` field is not its key is skipped and reported with its line; an id in two
/// day files is refused by `get` and by writes (naming both files) and skipped by queries; a day
/// file that does not parse fails only the reads that need it, and changes to it wait in the
/// journal until it is fixed. Randomized from a seed; the expectations come from a model of the
/// files (what was written, what was broken by hand), not from Folio.
@Suite struct ReadChecksTests {
    struct Model {
        var todos: [UUID: (day: String, title: String)] = [:]
    }

    @Test func brokenEntitiesAndFilesNeverBlockOrOverwriteTheRest() async throws {
        // FOLIO_READ_CHECKS_SEED replays a seed.
        let seed = ProcessInfo.processInfo.environment["FOLIO_READ_CHECKS_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        var summary = (mismatched: 0, duplicated: 0, refusedWrites: 0, waitingWrites: 0)
        for round in 0..<4 {
            let folder = TemporaryFolder("checks-\(round)")
            let days = (1...5).map { String(format: "2026-03-%02d", $0) }
            var model = Model()
            var store = try await Store.open(at: folder.url, configuration: .testing())
            let todos = (0..<(10 + Int(random.next() % 10))).map { index in
                Todo(id: UUID(), title: "todo \(index)", date: days[Int(random.next() % UInt64(days.count))])
            }
            try await store.write { tx in for todo in todos { try tx.upsert(todo) } }
            for todo in todos { model.todos[todo.id] = (todo.date, todo.title) }
            try await store.close()

            // By hand: one id field changed, one entity copied into another day, one day broken.
            let byDay = Dictionary(grouping: model.todos.keys.sorted { $0.uuidString < $1.uuidString }) { model.todos[$0]!.day }
            let usedDays = byDay.keys.sorted()
            let broken = usedDays[Int(random.next() % UInt64(usedDays.count))]
            let healthyIDs = model.todos.keys.filter { model.todos[$0]!.day != broken }.sorted { $0.uuidString < $1.uuidString }
            guard healthyIDs.count >= 2 else { continue }
            let mismatched = healthyIDs[Int(random.next() % UInt64(healthyIDs.count))]
            let duplicated = healthyIDs.filter { $0 != mismatched }[Int(random.next() % UInt64(healthyIDs.count - 1))]
            let copyDay = days.filter { $0 != model.todos[duplicated]!.day && $0 != broken }[Int(random.next() % 3)]
            try editFile(folder, day: model.todos[mismatched]!.day) { text in
                text.replacingOccurrences(of: "\"id\": \"\(mismatched.uuidString)\"", with: "\"id\": \"\(UUID().uuidString)\"")
            }
            try addCopy(folder, of: duplicated, from: model.todos[duplicated]!.day, to: copyDay, title: "the other copy")
            let brokenBytes = try Data(contentsOf: folder.file(path(broken)))
            try editFile(folder, day: broken) { $0.replacingOccurrences(of: "\"entities\": {", with: "\"entities\": {,") }
            summary.mismatched += 1
            summary.duplicated += 1

            store = try await Store.open(at: folder.url, configuration: .testing())
            // get, by id, for every todo of the model.
            for (id, expected) in model.todos.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                if expected.day == broken {
                    await #expect(throws: FolioError.self) { _ = try await store.get(Todo.self, id: id) }
                } else if id == mismatched {
                    do {
                        _ = try await store.get(Todo.self, id: id)
                        Issue.record("seed \(seed): the entity whose id field is not its key was read")
                    } catch let error as FolioError {
                        #expect(error.path == path(expected.day) && error.line != nil, "seed \(seed): \(error)")
                        #expect(error.message.contains("says its id is"), "seed \(seed): \(error)")
                    }
                } else if id == duplicated {
                    do {
                        _ = try await store.get(Todo.self, id: id)
                        Issue.record("seed \(seed): an id in two files was read as one of them")
                    } catch let error as FolioError {
                        #expect(error.message.contains(path(expected.day)) && error.message.contains(path(copyDay)), "seed \(seed): \(error)")
                        #expect(error.line != nil, "seed \(seed): \(error)")
                    }
                } else {
                    #expect(try await store.get(Todo.self, id: id)?.title == expected.title, "seed \(seed)")
                }
            }
            // Day queries: every healthy day serves its todos, minus the two broken entities.
            for day in days where day != broken {
                let served = Set(try await store.fetch(Query<Todo>(.day(day))).map(\.id))
                let expected = Set(model.todos.keys.filter { model.todos[$0]!.day == day && $0 != mismatched && $0 != duplicated })
                #expect(served == expected, "seed \(seed): day \(day)")
            }
            await #expect(throws: FolioError.self) { _ = try await store.fetch(Query<Todo>(.day(broken))) }

            // A write to the id in two files is refused and changes neither file.
            let copyBefore = try Data(contentsOf: folder.file(path(copyDay)))
            let originalBefore = try Data(contentsOf: folder.file(path(model.todos[duplicated]!.day)))
            do {
                try await store.write { tx in try tx.upsert(Todo(id: duplicated, title: "overwrite", date: copyDay)) }
                Issue.record("seed \(seed): a write into an id held by two files went through")
            } catch let error as FolioError {
                #expect(error.message.contains(path(copyDay)), "seed \(seed): \(error)")
                summary.refusedWrites += 1
            }
            // A write to the broken day waits in the journal; a write to a healthy day just works.
            let waiting = Todo(id: UUID(), title: "written while broken", date: broken)
            try await store.write { tx in try tx.upsert(waiting) }
            summary.waitingWrites += 1
            let healthyDay = days.first { $0 != broken }!
            let plain = Todo(id: UUID(), title: "plain", date: healthyDay)
            try await store.write { tx in try tx.upsert(plain) }
            model.todos[waiting.id] = (broken, waiting.title)
            model.todos[plain.id] = (healthyDay, plain.title)
            try await store.close()
            #expect(try Data(contentsOf: folder.file(path(broken))) != brokenBytes, "seed \(seed): the broken file was overwritten")
            #expect(try Data(contentsOf: folder.file(path(copyDay))) == copyBefore || copyDay == healthyDay, "seed \(seed)")
            #expect(
                try Data(contentsOf: folder.file(path(model.todos[duplicated]!.day))) == originalBefore
                    || model.todos[duplicated]!.day == healthyDay, "seed \(seed)")
            #expect(String(decoding: try Data(contentsOf: folder.file(path(copyDay))), as: UTF8.self).contains("the other copy"), "seed \(seed)")

            // Fixed by hand: the change that waited is applied on top of the fixed file.
            try brokenBytes.write(to: folder.file(path(broken)))
            store = try await Store.open(at: folder.url, configuration: .testing())
            let servedBroken = Set(try await store.fetch(Query<Todo>(.day(broken))).map(\.id))
            #expect(servedBroken == Set(model.todos.keys.filter { model.todos[$0]!.day == broken }), "seed \(seed)")
            #expect(try await store.get(Todo.self, id: waiting.id)?.title == waiting.title, "seed \(seed)")
            try await store.close()
        }
        print(
            "read checks: \(summary.mismatched) id mismatches, \(summary.duplicated) ids in two files, "
                + "\(summary.refusedWrites) writes refused, \(summary.waitingWrites) writes waited (seed \(seed))")
    }

    private func path(_ day: String) -> String { "todos/\(day.prefix(7))/\(day).json" }

    private func editFile(_ folder: TemporaryFolder, day: String, _ change: (String) -> String) throws {
        let url = folder.file(path(day))
        let text = try String(contentsOf: url, encoding: .utf8)
        let changed = change(text)
        #expect(changed != text, "the hand edit of \(day) changed nothing")
        try changed.write(to: url, atomically: true, encoding: .utf8)
    }

    /// Copies the entity `id` of one day file into another (creating it), with another title.
    private func addCopy(_ folder: TemporaryFolder, of id: UUID, from: String, to: String, title: String) throws {
        let source = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.file(path(from)))) as! [String: Any]
        var entity = (source["entities"] as! [String: Any])[id.uuidString] as! [String: Any]
        entity["title"] = title
        let url = folder.file(path(to))
        var target: [String: Any] = ["entities": [String: Any]()]
        if let data = try? Data(contentsOf: url) { target = try JSONSerialization.jsonObject(with: data) as! [String: Any] }
        var entities = target["entities"] as! [String: Any]
        entities[id.uuidString] = entity
        target["entities"] = entities
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: target, options: [.prettyPrinted, .sortedKeys]).write(to: url)
    }
}
