@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The saved id index (`.folio/index/<collection>`, FORMAT.md) against a model of where each id
/// is: whatever a process did since it built its index (inserts, moves, deletes, retitles, a
/// person's additions to day files it then read, several checkpoints, reopenings), every entry
/// whose file still has the entry's identity lists exactly the ids of that file. An entry that
/// lists an id the file lost, or misses one it holds, makes a fresh process's `get` or insert
/// answer from a wrong list; the index saves only the partitions whose ids changed since the last
/// save (IdIndex.swift), so a change it failed to note would show here.
@Suite struct SavedIndexModelTests {
    @Test func everyEntryWhoseFileIsUnchangedListsItsIds() async throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_SAVED_INDEX_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let folder = TemporaryFolder()
        let fileSystem = FileSystem(root: folder.url.path)
        let days = (1...40).map { day in String(format: "2025-%02d-%02d", 3 + day / 29, 1 + day % 28) }
        var model: [UUID: Todo] = [:]

        /// Each saved entry whose file has its identity, checked against the model (and the model
        /// against the files); returns how many entries were checked.
        func check(_ moment: String) throws -> Int {
            var checked = 0
            for (key, entry) in try IndexFile.read(fileSystem, collection: "todos") {
                let path = "todos/\(key.text.prefix(7))/\(key.text).json"
                guard try fileSystem.identity(path) == entry.identity else { continue }
                let expected = Set(model.values.filter { $0.date == key.text }.map(\.id.uuidString))
                #expect(
                    Set(entry.ids) == expected, "\(moment), \(key.text), seed \(seed): the index lists \(entry.ids.sorted()), the model \(expected.sorted())")
                #expect(entry.ids.count == Set(entry.ids).count, "\(moment), \(key.text), seed \(seed): an id listed twice")
                checked += 1
            }
            return checked
        }

        var store = try await Store.open(at: folder.url, configuration: .testing())
        let first = (0..<60).map { number in
            var made = todo("todo \(number)", on: days[pick(days.count)])
            made.id = random.uuid()
            return made
        }
        try await store.write { tx in for todo in first { try tx.upsert(todo) } }
        for todo in first { model[todo.id] = todo }
        var (checkpoints, entriesChecked, reopenings, typed) = (0, 0, 0, 0)
        for round in 0..<240 {
            let ids = model.keys.sorted { $0.uuidString < $1.uuidString }
            switch pick(10) {
            case 0, 1:   // a new todo
                var made = todo("new \(round)", on: days[pick(days.count)])
                made.id = random.uuid()
                try await store.write { [made] tx in try tx.upsert(made) }
                model[made.id] = made
            case 2, 3:   // a todo moves to another day
                var moved = model[ids[pick(ids.count)]]!
                moved.date = days[pick(days.count)]
                try await store.write { [moved] tx in try tx.upsert(moved) }
                model[moved.id] = moved
            case 4:   // a todo is deleted
                let id = ids[pick(ids.count)]
                try await store.write { tx in try tx.delete(Todo.self, id: id) }
                model[id] = nil
            case 5:   // a todo is retitled where it is
                var retitled = model[ids[pick(ids.count)]]!
                retitled.title = "retitled \(round)"
                try await store.write { [retitled] tx in try tx.upsert(retitled) }
                model[retitled.id] = retitled
            case 6:   // a person adds a todo to a day file, and the app reads that day
                try await store.checkpoint()
                let existing = days.filter { FileManager.default.fileExists(atPath: folder.file("todos/\($0.prefix(7))/\($0).json").path) }
                guard !existing.isEmpty else { break }
                let day = existing[pick(existing.count)]
                var made = todo("typed \(round)", on: day)
                made.id = random.uuid()
                let url = folder.file("todos/\(day.prefix(7))/\(day).json")
                var contents = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
                var entities = contents["entities"] as? [String: Any] ?? [:]
                entities[made.id.uuidString] = [
                    "id": made.id.uuidString, "title": made.title, "date": day, "done": false, "priority": 0,
                    "createdAt": "2025-05-01T00:00:00.000Z", "updatedAt": "2025-05-01T00:00:00.000Z",
                ]
                contents["entities"] = entities
                try JSONSerialization.data(withJSONObject: contents, options: [.prettyPrinted, .sortedKeys]).write(to: url)
                let read = try await store.fetch(Query<Todo>(.day(day)))
                #expect(read.contains { $0.id == made.id }, "round \(round), seed \(seed): the typed todo was not read")
                model[made.id] = read.first { $0.id == made.id }
                typed += 1
            case 7, 8:   // a checkpoint, which saves the index
                try await store.checkpoint()
                checkpoints += 1
                entriesChecked += try check("round \(round), after a checkpoint")
            default:   // the process ends; the next builds its index from the saved one
                try await store.close()
                entriesChecked += try check("round \(round), after closing")
                store = try await Store.open(at: folder.url, configuration: .testing())
                reopenings += 1
            }
        }
        try await store.close()
        entriesChecked += try check("at the end")
        // The files themselves hold what the model says.
        store = try await Store.open(at: folder.url, configuration: .testing())
        var read: [UUID: Todo] = [:]
        for day in days { for todo in try await store.fetch(Query<Todo>(.day(day))) { read[todo.id] = todo } }
        try await store.close()
        #expect(read == model, "seed \(seed): the files differ from the model")
        #expect(entriesChecked > 100 && checkpoints > 10 && reopenings > 5 && typed > 5, "seed \(seed): too little was checked")
        print(
            "saved id index: \(entriesChecked) entries checked against the model after \(checkpoints) checkpoints, "
                + "\(reopenings) reopenings and \(typed) typed todos (seed \(seed))")
    }
}
