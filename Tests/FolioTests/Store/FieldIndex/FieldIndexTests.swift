@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The field index (`.folio/index/<collection>.fields`): a query over many files filters on its
/// columns instead of reading the files, and must still answer exactly as the files say, whatever
/// a person or a tool did to them since the index was written.
///
/// The model is the files themselves, read with Foundation's JSON parser (not Folio's): the todos
/// whose title contains the word and that are not done.
@Suite struct FieldIndexTests {
    static let word = "milk"
    static let words = ["milk", "silk", "bread", "eggs", "tea", "rice", "soap", "mail"]
    static let days = (1...12).map { String(format: "2025-03-%02d", $0) }

    static func query() -> Query<Todo> {
        let word = Self.word
        return Query<Todo>(.all, where: #Predicate { $0.title.contains(word) && !$0.done })
    }

    /// What the files say the query must return: id → its fields (``describe(_:)``), from every
    /// day file's JSON.
    static func model(_ folder: TemporaryFolder) throws -> [String: String] {
        var expected: [String: String] = [:]
        let month = folder.url.appendingPathComponent("todos/2025-03")
        for name in try FileManager.default.contentsOfDirectory(atPath: month.path) where name.hasSuffix(".json") {
            let data = try Data(contentsOf: month.appendingPathComponent(name))
            let file = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(name) is not a JSON object")
            for (id, value) in file["entities"] as? [String: Any] ?? [:] {
                let entity = try #require(value as? [String: Any])
                let title = entity["title"] as? String ?? ""
                if title.contains(word), entity["done"] as? Bool == false {
                    let tag = entity["tagID"] as? String
                    expected[id] = "\(title)|\(entity["date"] as? String ?? "?")|\((entity["priority"] as? NSNumber)?.intValue ?? -1)|\(tag ?? "nil")"
                }
            }
        }
        return expected
    }

    /// The query's answer; then the field index entries it made are saved at once (the store
    /// saves them only `checkpointDelay` after the read, an hour in tests).
    static func found(_ store: Store) async throws -> [String: String] {
        let todos = try await store.fetch(query())
        await store.saveFieldIndexesNow()
        let found = Dictionary(todos.map { ($0.id.uuidString, describe($0)) }, uniquingKeysWith: { first, _ in first })
        #expect(found.count == todos.count, "an id answered twice")
        return found
    }

    /// A todo's fields as ``model(_:)`` reads them from the files.
    static func describe(_ todo: Todo) -> String { "\(todo.title)|\(todo.date)|\(todo.priority)|\(todo.tagID ?? "nil")" }

    static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(arguments.joined(separator: " ")) failed")
    }

    /// Edits one todo of a file in place (same inode, same size) so that it comes to match the
    /// query, and sets the file's modification time back to what it was: only the status-change
    /// time tells the file changed. `undone`: a todo with the word is marked not done
    /// (`"done": true` becomes `"done":false`); `silk`: a todo not done gets the word in its title.
    /// Only a file none of whose todos matches yet is edited: a query reads nothing of it then
    /// but its identity (a file with a match is also read for that match, with a second check).
    /// - Returns: Whether the file had such a todo and no match.
    static func makeMatchInPlaceKeepingTimes(_ file: URL, _ mode: String, pick: Int) throws -> Bool {
        let script = """
            import json, os, sys
            path, mode, pick = sys.argv[1], sys.argv[2], int(sys.argv[3])
            raw = open(path, "rb").read()
            entities = json.loads(raw)["entities"]
            def wanted(v):
                if mode == "undone": return v.get("done") is True and "milk" in v.get("title", "")
                return v.get("done") is False and "silk" in v.get("title", "")
            def matches(v):
                return v.get("done") is False and "milk" in v.get("title", "")
            # Only a file with no match yet: a query then reads nothing of it but its identity, so
            # the stat alone must tell that it changed.
            targets = [] if any(matches(v) for v in entities.values()) else sorted(k for k, v in entities.items() if wanted(v))
            if not targets:
                print("none"); sys.exit(0)
            key = targets[pick % len(targets)]
            start = raw.find(json.dumps(key).encode())
            end = raw.find(b"}", start)
            old, new = (b'"done": true', b'"done":false') if mode == "undone" else (b"silk", b"milk")
            at = raw.find(old, start, end)
            assert at >= 0, "no %r in the object of %s" % (old, key)
            before = os.stat(path)
            with open(path, "r+b") as f:
                f.seek(at)
                f.write(new)
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
            after = os.stat(path)
            assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
            print("edited")
            """
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, file.path, mode, String(pick)]
        process.standardOutput = output
        try process.run()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the in-place edit of \(file.lastPathComponent) failed")
        return said.hasPrefix("edited")
    }

    /// A store with one todo with the word on each day, written and closed.
    static func oneTodoADay(in folder: TemporaryFolder) async throws -> [Todo] {
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let todos = days.map { todo("milk on \($0)", on: $0) }
        try await store.write { tx in for todo in todos { try tx.upsert(todo) } }
        try await store.checkpoint()
        try await store.close()
        return todos
    }

    /// Random edits of the files by hand and by tools, between queries of one open store and of
    /// fresh ones; every answer must be the files' own. Replays with `FOLIO_FIELD_INDEX_SEED`.
    /// `whole`: every todo has a tag, so the index's columns hold the files' entities whole and
    /// queries build their matches from them (the files not opened); otherwise every other todo
    /// has none (absent from its object: the files are not whole) and the matches are read from
    /// the files.
    @Test(arguments: [false, true]) func everyAnswerIsTheFilesWhateverChangedThem(whole: Bool) async throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_FIELD_INDEX_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder()
        var store = try await Store.open(at: folder.url, configuration: .testing())
        var todos: [Todo] = []
        for (number, day) in Self.days.enumerated() {
            for slot in 0..<8 {
                var made = todo(
                    Self.words[random.index(Self.words.count)] + " " + Self.words[random.index(Self.words.count)], on: day,
                    done: random.index(3) == 0)
                if number < 4 {
                    // The first four days start with no match, one todo to mark not done and one
                    // to retitle: the in-place edits always find a file to make match.
                    let others = Self.words.filter { $0 != Self.word && $0 != "silk" }
                    let other = others[random.index(others.count)]
                    (made.title, made.done) = slot == 0 ? ("milk " + other, true) : slot == 1 ? ("silk " + other, false) : (made.title, made.done)
                    if slot > 1, made.title.contains(Self.word) { made.done = true }
                }
                made.id = random.uuid()
                made.tagID = whole || slot % 2 == 0 ? "tag-\(random.index(5))" : nil
                todos.append(made)
            }
        }
        try await store.write { [todos] tx in for todo in todos { try tx.upsert(todo) } }
        try await store.checkpoint()
        // A fresh process: nothing in memory (an open store answers from what it holds).
        try await store.close()
        store = try await Store.open(at: folder.url, configuration: .testing())
        // Files that changed in the last two seconds get no entry: let them settle once.
        try await Task.sleep(for: .milliseconds(2200))
        var answered = 0, fromIndex = 0, fromColumns = 0, edits: [String: Int] = [:]
        func check(_ label: String) async throws {
            let before = await store.cacheFootprint()
            let found = try await Self.found(store)
            // Every entry was made of a file read before now, at least two seconds after it last
            // changed (FORMAT.md), so it changed at least two seconds before now.
            let finished = FileIdentity.now
            let expected = try Self.model(folder)
            #expect(found == expected, "\(label): \(found.count) found, \(expected.count) in the files (seed \(seed))")
            answered += 1
            let after = await store.cacheFootprint()
            fromIndex += after.partitionsFromFieldIndex - before.partitionsFromFieldIndex
            fromColumns += after.partitionsFromColumns - before.partitionsFromColumns
            // No entry of a file that changed within two seconds of being read (racily clean).
            for (key, entry) in FieldIndexFile.read(FileSystem(root: folder.url.path), collection: "todos", fields: nil).entries {
                // Half a second of slack for the clocks (the file system's is coarser).
                #expect(
                    finished - max(entry.identity.changed, entry.identity.modified) >= 1_500_000_000,
                    "\(key.text) entered the index unsettled (seed \(seed))")
            }
        }
        try await check("first query")
        try #require(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent(".folio/index/todos.fields").path))
        try await check("second query, from the index")

        // Days changed since the files last settled: their entries are gone until they settle
        // again, so the in-place edits (the ones only the ctime reveals) go to the other days,
        // whose entries the index still holds.
        var changedSinceSettled: Set<String> = []
        for round in 0..<16 {
            let kind = round < 4 ? round : [0, 1, 0, 1, 2, 3, 4, 5][random.index(8)]
            var day = Self.days[random.index(Self.days.count)]
            var editedInPlace = false
            if kind <= 1 {
                // The first settled day (in a random order) that has a todo to edit and no match.
                for candidate in Self.days.filter({ !changedSinceSettled.contains($0) }).shuffled(using: &random) {
                    let file = folder.url.appendingPathComponent("todos/2025-03/\(candidate).json")
                    if try Self.makeMatchInPlaceKeepingTimes(file, kind == 0 ? "undone" : "silk", pick: random.index(100)) {
                        (day, editedInPlace) = (candidate, true)
                        break
                    }
                }
            }
            changedSinceSettled.insert(day)
            let file = folder.url.appendingPathComponent("todos/2025-03/\(day).json")
            switch kind {
            case 0 where editedInPlace, 1 where editedInPlace:
                edits["in place, times kept", default: 0] += 1
            case 2:
                try Self.run(["sed", "-i", "s/bread/milk/g; s/\"done\": true/\"done\": false/", file.path])
                edits["sed -i", default: 0] += 1
            case 3:
                try Self.run(["touch", "-d", "3 days ago", file.path])
                edits["touch", default: 0] += 1
            case 4:
                var made = todo("fresh milk \(round)", on: day)
                made.id = random.uuid()
                made.tagID = whole ? "tag-fresh" : nil
                try await store.write { [made] tx in try tx.upsert(made) }
                try await store.checkpoint()
                edits["Folio", default: 0] += 1
            default:
                // A script's save: python's json, other spacing, one title rewritten.
                let script = """
                    import json, sys
                    path = sys.argv[1]
                    data = json.load(open(path, encoding="utf-8"))
                    key = sorted(data["entities"])[int(sys.argv[2]) % len(data["entities"])]
                    data["entities"][key]["title"] = sys.argv[3]
                    json.dump(data, open(path, "w", encoding="utf-8"), indent=1)
                    """
                try Self.run(["python3", "-c", script, file.path, String(random.index(100)), "milk by script \(round)"])
                edits["python json", default: 0] += 1
            }
            if random.index(3) == 0 {
                try await store.close()
                store = try await Store.open(at: folder.url, configuration: .testing())
            }
            try await check("round \(round), after edit \(kind) of \(day)")
            if round == 9 {
                try await Task.sleep(for: .milliseconds(2200))   // the edited files settle and are indexed again
                changedSinceSettled = []
            }
        }
        try await store.close()
        #expect(fromIndex > 0, "no partition was filtered on the index (seed \(seed))")
        if whole {
            #expect(fromColumns > 0, "no partition's matches were built from the index's columns (seed \(seed))")
        } else {
            #expect(fromColumns == 0, "matches were built from the columns of files whose todos lack a field (seed \(seed))")
        }
        #expect(edits["in place, times kept", default: 0] >= 2, "the edits only the ctime reveals did not happen (seed \(seed))")
        print(
            "field index (whole: \(whole)): \(answered) answers as the files say, \(fromIndex) partitions from the index (\(fromColumns) from its columns), edits \(edits.sorted { $0.key < $1.key }) (seed \(seed))"
        )
    }

    /// A query never writes: the field index entries it makes are saved by the store in a step of
    /// its own, `checkpointDelay` after the read. Every disk-changing step taken while a query runs
    /// is recorded; the index appears only after the queries returned, and holds every file.
    @Test func aQueryWritesNothingTheStoreSavesTheIndexAfterIt() async throws {
        let folder = TemporaryFolder()
        let todos = try await Self.oneTodoADay(in: folder)
        try await Task.sleep(for: .milliseconds(2200))   // entries only of files two seconds old
        let inQuery = LockedBox(false), written = LockedBox<[String]>([])
        let hook: IOHook = { step in
            if case .read = step { return }
            if inQuery.value { written.mutate { $0.append(step.description) } }
        }
        let index = folder.url.appendingPathComponent(".folio/index/todos.fields")
        let store = try await Store.open(at: folder.url, configuration: .testing(checkpointDelay: .seconds(5), hook: hook))
        for round in 0..<2 {
            inQuery.mutate { $0 = true }
            let found = try await store.fetch(Self.query())
            inQuery.mutate { $0 = false }
            #expect(found.count == todos.count, "round \(round)")
        }
        #expect(written.value.isEmpty, "a query changed the disk: \(written.value)")
        #expect(!FileManager.default.fileExists(atPath: index.path), "the index was written before the store's step")
        // The store's own step, a few seconds later. The deadline only catches a hung run: in the
        // full suite on two cores, a test's tasks can wait minutes for a thread (one run took 337 s).
        let deadline = ContinuousClock.now + .seconds(600)
        while !FileManager.default.fileExists(atPath: index.path) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let entries = FieldIndexFile.read(FileSystem(root: folder.url.path), collection: "todos", fields: nil).entries
        #expect(entries.count == Self.days.count, "the store saved \(entries.count) entries of \(Self.days.count) files")
        // The next query reads the files from the index, and writes nothing either.
        let before = await store.cacheFootprint().partitionsFromFieldIndex
        inQuery.mutate { $0 = true }
        #expect(try await store.fetch(Self.query()).count == todos.count)
        inQuery.mutate { $0 = false }
        #expect(await store.cacheFootprint().partitionsFromFieldIndex - before == Self.days.count - 1, "all but the sample, in memory")
        #expect(written.value.isEmpty, "a query changed the disk: \(written.value)")
        try await store.close()
    }

    /// A store of one todo a day whose field index a first query made over settled files, closed;
    /// returns the index file.
    static func indexedStore(in folder: TemporaryFolder) async throws -> URL {
        let todos = try await oneTodoADay(in: folder)
        try await Task.sleep(for: .milliseconds(2200))
        let store = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await found(store).count == todos.count)
        try await store.close()
        return folder.url.appendingPathComponent(".folio/index/todos.fields")
    }

    /// An index cut short, with a flipped byte, or edited by hand (a value changed without its
    /// checksum) is never trusted: the answer is the files', and the index is written anew.
    @Test func aDamagedIndexIsNeverTrusted() async throws {
        let folder = TemporaryFolder()
        let index = try await Self.indexedStore(in: folder)
        let good = try Data(contentsOf: index)
        let text = try #require(String(data: good, encoding: .utf8))
        #expect(text.hasPrefix("folio-fields 3\nids unique\nP 2025-03-01 "))
        let title = try #require(text.range(of: "[\"milk on 2025-03-01\"]"), "the title column holds each todo's title")
        let header = try #require(text.range(of: "\nP 2025-03-02 "))

        let damages: [(String, Data)] = [
            ("cut short", good.prefix(good.count - 20)),
            ("a title edited by hand, the length kept", Data(text.replacingCharacters(in: title, with: "[\"silk on 2025-03-01\"]").utf8)),
            ("a byte flipped in the header", Data(text.replacingCharacters(in: header, with: "\nP 2025-03-12 ").utf8)),
            ("not an index", Data("{\"entities\": {}}\n".utf8)),
        ]
        for (name, damaged) in damages {
            try damaged.write(to: index)
            let found = try await Store.verify(at: folder.url)
            #expect(found.problems.contains { $0.path.hasSuffix("todos.fields") }, "\(name): verify reports it")
            let reader = try await Store.open(at: folder.url, configuration: .testing())
            let before = await reader.cacheFootprint().partitionsFromFieldIndex
            #expect(try await Self.found(reader) == (try Self.model(folder)), "\(name)")
            #expect(await reader.cacheFootprint().partitionsFromFieldIndex == before, "\(name): an entry was trusted")
            try await reader.close()
            #expect(try Data(contentsOf: index) == good, "\(name): the index is written anew from the files")
            let report = try await Store.verify(at: folder.url)
            #expect(!report.problems.contains { $0.path.hasSuffix("todos.fields") })
        }
    }

    /// An index an older Folio wrote (`folio-fields 2`, without the files' `whole` flag) is not
    /// read: `folio verify` notes it (no warning: nothing is damaged), a query reads the files, and
    /// the index is written anew in the current format.
    @Test func anIndexOfAnOlderFormatIsWrittenAnew() async throws {
        let folder = TemporaryFolder()
        let index = try await Self.indexedStore(in: folder)
        let current = try #require(String(data: try Data(contentsOf: index), encoding: .utf8))
        let older = current.replacingOccurrences(of: "folio-fields 3\n", with: "folio-fields 2\n")
        try Data(older.utf8).write(to: index)
        let report = try await Store.verify(at: folder.url)
        let notes = report.problems.filter { $0.path.hasSuffix("todos.fields") }
        #expect(notes.count == 1 && notes.allSatisfy { $0.severity == .note && $0.message.contains("older format") }, "\(notes)")
        let reader = try await Store.open(at: folder.url, configuration: .testing())
        let before = await reader.cacheFootprint().partitionsFromFieldIndex
        #expect(try await Self.found(reader) == (try Self.model(folder)))
        #expect(await reader.cacheFootprint().partitionsFromFieldIndex == before, "an entry of the older index was used")
        try await reader.close()
        #expect(try String(data: Data(contentsOf: index), encoding: .utf8)?.hasPrefix("folio-fields 3\n") == true, "written anew")
        #expect(!(try await Store.verify(at: folder.url)).problems.contains { $0.path.hasSuffix("todos.fields") })
    }

    /// Files written less than two seconds before a query read them get no entry; once settled,
    /// every file gets one, the filter's sample partition (in memory) included, and the next
    /// query reads all the others from the index.
    @Test func onlySettledFilesGetEntries() async throws {
        let folder = TemporaryFolder()
        let todos = try await Self.oneTodoADay(in: folder)
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let fileSystem = FileSystem(root: folder.url.path)
        _ = try await Self.found(store)
        #expect(FieldIndexFile.read(fileSystem, collection: "todos", fields: nil).entries.isEmpty, "files written just now are not settled")
        try await Task.sleep(for: .milliseconds(2200))
        _ = try await Self.found(store)
        let entries = FieldIndexFile.read(fileSystem, collection: "todos", fields: nil).entries
        #expect(entries.count == Self.days.count, "every settled file has an entry, the filter's sample partition in memory too")
        let before = await store.cacheFootprint().partitionsFromFieldIndex
        #expect(try await Self.found(store).count == todos.count)
        #expect(await store.cacheFootprint().partitionsFromFieldIndex - before == Self.days.count - 1, "all but the sample, which is in memory")
        try await store.close()
    }

    /// The file's form round-trips: day and month keys, times before 1970, a file without
    /// entities, field names that need quoting, whether a file's columns hold its entities whole,
    /// and a query that reads only some columns, then the others from the same open file.
    @Test func theIndexFileReadsBackWhatWasWritten() throws {
        let folder = TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent(".folio/tmp"), withIntermediateDirectories: true)
        let fileSystem = FileSystem(root: folder.url.path)
        let document = Array(#"{"entities":{"a":{"title":"Milk \"fresh\"","na me":1,"done":false},"b":{"title":"Bread","list":[1]}}}"#.utf8)
        let columns = try #require(FieldScanner.columns(document))
        #expect(String(decoding: columns.ids, as: UTF8.self) == #"["a","b"]"#)
        #expect(
            columns.fields.mapValues { String(decoding: $0, as: UTF8.self) }
                == ["title": #"["Milk \"fresh\"","Bread"]"#, "na me": "[1,null]", "done": "[false,null]", "list": "[null,null]"])
        #expect(!columns.whole, "b has no \"na me\", and a list")
        let scalars = try #require(FieldScanner.columns(Array(#"{"entities":{"a":{"t":"x","n":-1.5e3},"b":{"n":2,"t":"\u00e9"}}}"#.utf8)))
        #expect(scalars.whole, "every entity has every field, each a string or a number")
        let explicitNull = try #require(FieldScanner.columns(Array(#"{"entities":{"a":{"t":"x"},"b":{"t":null}}}"#.utf8)))
        #expect(!explicitNull.whole, "a null is not a value the columns can tell from no field")
        let identity = FileIdentity(
            device: 7, inode: 9, size: Int64(document.count), modified: -5_000_000_000, changed: 1_795_000_000_000_000_000, isDirectory: false)
        let empty = FileIdentity(device: 7, inode: 10, size: 20, modified: 1, changed: 2, isDirectory: false)
        for emptyIsWhole in [false, true] {
            let entries: [PartitionKey: FieldIndexFile.Record] = [
                try #require(PartitionKey.day(parsing: "1969-12-31")): FieldIndexFile.Record(identity: identity, columns: columns),
                try #require(PartitionKey.month(parsing: "2026-11")): FieldIndexFile.Record(
                    identity: empty, columns: FieldColumns(ids: Array("[]".utf8), ranges: [], fields: [:], whole: emptyIsWhole)),
            ]
            try FieldIndexFile.write(fileSystem, collection: "notes", entries: entries)
            for fields: Set<String>? in [nil, ["title"], ["na me", "done"], ["absent"]] {
                let read = FieldIndexFile.read(fileSystem, collection: "notes", fields: fields)
                #expect(read.idsAreUnique)
                #expect(read.entries.count == 2)
                let everyColumn = fields == nil || Set(columns.fields.keys).isSubset(of: fields ?? [])
                #expect((read.rest == nil) == everyColumn)
                // The columns left out, read later from the same open file, even once it is replaced.
                try FieldIndexFile.write(fileSystem, collection: "notes", entries: [:])
                let others = read.rest.flatMap { FieldIndexFile.columns($0) } ?? [:]
                for (key, written) in entries {
                    let back = try #require(read.entries[key], "\(key.text)")
                    #expect(back.identity == written.identity && back.count == written.count && back.ids == written.ids)
                    #expect(back.whole == written.whole && back.allColumns == everyColumn, "\(key.text), \(fields ?? [])")
                    #expect(back.fileRanges() == written.fileRanges())
                    let expected = written.fields.filter { everyColumn || fields?.contains($0.key) == true }
                    #expect(back.fields.mapValues(Array.init) == expected.mapValues(Array.init), "\(key.text), \(fields ?? [])")
                    let all = back.fields.merging(others[key] ?? [:]) { loaded, _ in loaded }
                    #expect(all.mapValues(Array.init) == written.fields.mapValues(Array.init), "\(key.text), \(fields ?? []) and the rest")
                }
                try FieldIndexFile.write(fileSystem, collection: "notes", entries: entries)
            }
            #expect(entries.values.first { $0.count == 2 }?.fileRanges() == columns.ranges)
        }
    }

    /// In a copy (`cp -a`, the index copied along) every entry names the original's files: each
    /// is made again from the copy's, the sample partition the filter reads into memory too (a
    /// stale entry of it would make every query compare every id).
    @Test func aCopiedIndexIsMadeAgainForEveryFile() async throws {
        let folder = TemporaryFolder()
        _ = try await Self.oneTodoADay(in: folder)
        try await Task.sleep(for: .milliseconds(2200))
        let original = try await Store.open(at: folder.url, configuration: .testing())
        _ = try await Self.found(original)
        try await original.close()
        let copy = TemporaryFolder()
        try Self.run(["cp", "-a", folder.url.path + "/.", copy.url.path])
        try await Task.sleep(for: .milliseconds(2200))   // cp gave every file a new ctime
        let store = try await Store.open(at: copy.url, configuration: .testing())
        #expect(try await Self.found(store) == (try Self.model(copy)))
        try await store.close()
        let fileSystem = FileSystem(root: copy.url.path)
        let entries = FieldIndexFile.read(fileSystem, collection: "todos", fields: nil).entries
        #expect(entries.count == Self.days.count)
        for day in Self.days {
            let key = try #require(PartitionKey.day(parsing: day))
            let identity = try fileSystem.identity("todos/2025-03/\(day).json")
            #expect(entries[key]?.identity == identity, "\(day)'s entry is not of the copy's file")
        }
    }

    /// An id a person copies into a new day file, while its other copy sits in a file the index
    /// vouches for, is found as when every file is read: the query returns neither copy.
    @Test func anIdCopiedIntoANewFileIsFoundBesideTheIndex() async throws {
        let folder = TemporaryFolder()
        let todos = try await Self.oneTodoADay(in: folder)
        try await Task.sleep(for: .milliseconds(2200))
        let first = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await Self.found(first).count == todos.count)
        try await first.close()
        let victim = todos[4]
        let script = """
            import json, sys
            source, target, key = sys.argv[1], sys.argv[2], sys.argv[3]
            entity = json.load(open(source, encoding="utf-8"))["entities"][key]
            entity["date"] = "2025-03-20"
            json.dump({"entities": {key: entity}}, open(target, "w", encoding="utf-8"), indent=2)
            """
        let month = folder.url.appendingPathComponent("todos/2025-03")
        try Self.run([
            "python3", "-c", script, month.appendingPathComponent("\(victim.date).json").path,
            month.appendingPathComponent("2025-03-20.json").path, victim.id.uuidString,
        ])
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let found = try await Self.found(store)
        #expect(await store.cacheFootprint().partitionsFromFieldIndex > 0, "the index was not used")
        #expect(found[victim.id.uuidString] == nil, "an id in two files was served from one of them")
        #expect(found.count == todos.count - 1)
        try await store.close()
    }
}
