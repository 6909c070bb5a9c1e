@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// Copies taken file by file at different instants, in any order, against a model.
///
/// A store is written step by step (random upserts, moves between days and months, deletes, all
/// with outbox commands; checkpoints; closes and reopens), and after every step the bytes of every
/// file of the folder are recorded. A "copy" then takes each file from a random step of a window
/// of a few steps (as rsync, cp or a sync tool would read it at some instant during the window, in
/// any order), its journal included, with a new lock file. FORMAT.md, "Copying the folder": the copy
/// either opens to the state the model had at some step of the window (a prefix of the history:
/// the same todos, and the same pending commands as the store had then), or is refused with
/// `inconsistentCopy`. A copy whose files all come from one step must open. The model is a
/// dictionary of todos, updated by the test's own operations.
@Suite struct TornCopyModelTests {
    struct Step {
        var files: [String: [UInt8]]
        var todos: [String: String]   // id → "title@date"
        var pending: Int
    }

    @Test func filesCopiedAtDifferentInstantsOpenWholeOrAreRefused() async throws {
        let seed =
            ProcessInfo.processInfo.environment["FOLIO_TORN_COPY_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let root = TemporaryFolder("source")
        var store = try await Store.open(at: root.url, configuration: .testing())
        var model: [UUID: Todo] = [:]
        var steps: [Step] = []
        let days = ["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02", "2026-03-15"]

        func record() async throws {
            var files: [String: [UInt8]] = [:]
            for path in root.allFiles() where path != StoreLayout.lockFile {
                if let data = FileManager.default.contents(atPath: root.url.path + "/" + path) { files[path] = Array(data) }
            }
            let pending = try await store.pendingCommands().count
            steps.append(Step(files: files, todos: Self.describe(model.values), pending: pending))
        }

        try await record()
        for number in 0..<60 {
            switch random.next() % 10 {
            case 0...4:
                // One transaction of one to three changes: new todos, edits, moves.
                let count = 1 + Int(random.next() % 3)
                var changed: [Todo] = []
                for _ in 0..<count {
                    if !model.isEmpty && random.next() % 2 == 0 {
                        var existing = model.values.sorted { $0.id.uuidString < $1.id.uuidString }[Int(random.next() % UInt64(model.count))]
                        existing.title = "edit \(number)"
                        existing.date = days[Int(random.next() % UInt64(days.count))]
                        changed.append(existing)
                    } else {
                        changed.append(todo("new \(number)", on: days[Int(random.next() % UInt64(days.count))]))
                    }
                }
                let batch = changed
                try await store.write { transaction in for todo in batch { try transaction.upsert(todo) } }
                for todo in changed { model[todo.id] = todo }
            case 5:
                guard let victim = model.keys.sorted(by: { $0.uuidString < $1.uuidString }).first else { continue }
                _ = try await store.write { try $0.delete(Todo.self, id: victim) }
                model[victim] = nil
            case 6...7:
                try await store.checkpoint()
            case 8:
                try await store.close()
                store = try await Store.open(at: root.url, configuration: .testing())
            default:
                continue
            }
            try await record()
        }
        try await store.close()

        var opened = 0, refused = 0, sameStep = 0, staleSaves = 0
        var silent: [String] = []
        let work = root.url.deletingLastPathComponent()
        for copyNumber in 0..<40 {
            let first = Int(random.next() % UInt64(steps.count))
            let last = min(steps.count - 1, first + Int(random.next() % 4))
            // Every tenth copy takes all its files at one instant: it must open.
            let whole = copyNumber % 10 == 0
            let instant = first + Int(random.next() % UInt64(last - first + 1))
            let copy = work.appendingPathComponent("copy-\(copyNumber)")
            let paths = Set(steps[first...last].flatMap(\.files.keys))
            for path in paths.sorted() {
                let step = whole ? instant : first + Int(random.next() % UInt64(last - first + 1))
                guard let bytes = steps[step].files[path] else { continue }
                let target = copy.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(bytes).write(to: target)
            }
            if whole { sameStep += 1 }
            let label = "copy \(copyNumber) of steps \(first)…\(last)\(whole ? " (all at step \(instant))" : "")"
            // An editor's buffer of one day as Folio wrote it earlier: a version the copy holds in
            // `.folio/versions/`, read before the copy's first open.
            let buffer = Self.olderBuffer(in: copy, random: &random)
            let reopened: Store
            do {
                reopened = try await Store.open(at: copy, configuration: .testing())
            } catch let error as FolioError where error.code == .inconsistentCopy {
                refused += 1
                if whole { silent.append("\(label) was refused, though every file is from one instant: \(error)") }
                let report = try await Store.verify(at: copy)
                if !report.problems.contains(where: { $0.kind == .inconsistentCopy }) {
                    silent.append("\(label): opening refuses it but verify does not report it")
                }
                continue
            }
            opened += 1
            let todos = Self.describe(try await reopened.fetch(Query<Todo>(.all)))
            let pending = try await reopened.pendingCommands().count
            try await reopened.close()
            let candidates = whole ? [steps[instant]] : Array(steps[first...last])
            if !candidates.contains(where: { $0.todos == todos && $0.pending == pending }) {
                let nearest = candidates.map { step in step.todos.filter { todos[$0.key] != $0.value }.count + todos.filter { step.todos[$0.key] == nil }.count
                }
                silent.append("\(label) opened to a state no step had: \(todos.count) todos, \(pending) commands; differences from each step: \(nearest)")
                continue
            }
            // The person saves that older buffer with one todo added (python, by rename): the
            // copy keeps what Folio wrote since and adds the person's todo (FORMAT.md, "A save
            // made from an older version", "Copying the folder").
            guard let buffer else { continue }
            let added = todo("by hand \(copyNumber)", on: buffer.day)
            let entity = String(decoding: JSONWriter.compact(try EntityCoder().encode(added)), as: UTF8.self)
            let bufferFile = work.appendingPathComponent("buffer-\(copyNumber).json")
            try Data(buffer.bytes).write(to: bufferFile)
            if let failure = runTool(
                "/usr/bin/python3",
                [
                    "-c", Self.pythonSave, bufferFile.path, copy.appendingPathComponent(buffer.path).path,
                    added.id.uuidString, entity,
                ])
            {
                Issue.record("\(label): \(failure)")
                continue
            }
            staleSaves += 1
            let afterSave = try await Store.open(at: copy, configuration: .testing())
            let merged = Self.describe(try await afterSave.fetch(Query<Todo>(.all)))
            try await afterSave.close()
            var expected = todos
            expected[added.id.uuidString] = "\(added.title)@\(added.date)"
            if merged != expected {
                let lost = expected.keys.filter { merged[$0] == nil }, back = merged.keys.filter { expected[$0] == nil }
                let changed = expected.filter { merged[$0.key] != nil && merged[$0.key] != $0.value }.count
                silent.append(
                    "\(label): a save from an older version of \(buffer.path) (version \(buffer.version)) lost \(lost.count) todos, brought back \(back.count) deleted ones (\(back.sorted().prefix(3))) and changed \(changed)"
                )
            }
        }
        print(
            "torn copies: \(steps.count) steps, 40 copies, \(opened) opened whole, \(refused) refused, \(sameStep) from one instant, \(staleSaves) saves from an older buffer in them, \(silent.count) silent partial or lost (seed \(seed))"
        )
        #expect(silent.isEmpty, "\(silent.prefix(10).joined(separator: "\n"))")
        // Not vacuous the other way: a check that refused every copy mixed from several steps
        // would pass the lines above. Most mixed copies hold the same bytes as one step (few files
        // change per step) and must open.
        #expect(opened > sameStep, "only copies from one instant opened: \(opened) of 40")
        #expect(staleSaves >= 5, "too few saves from an older buffer to prove anything: \(staleSaves)")
    }

    /// A version of one day file that the copy keeps (its versions folder's newest is a version
    /// Folio wrote and is the file itself, FORMAT.md), older than the newest where there is one and
    /// not among the oldest that a checkpoint at open may drop past the limit of 16.
    static func olderBuffer(in copy: URL, random: inout SplitMix64) -> (path: String, day: String, version: String, bytes: [UInt8])? {
        let files =
            FileManager.default.enumerator(atPath: copy.appendingPathComponent("todos").path)?
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".json") && $0.count == "YYYY-MM/YYYY-MM-DD.json".count }.sorted() ?? []
        for offset in 0..<files.count {
            let path = "todos/" + files[(offset + random.index(files.count)) % files.count]
            let folder = copy.appendingPathComponent(StoreLayout.machinery + "/versions/" + path)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
            guard let newest = names.last, !newest.hasSuffix(".edit.json"),
                let file = FileManager.default.contents(atPath: copy.appendingPathComponent(path).path),
                KeptVersions.parse(newest)?.hash == ContentHash(Array(file))
            else { continue }
            let choices = names.suffix(12).filter { !$0.hasSuffix(".edit.json") }
            let version = choices.count > 1 ? choices.dropLast()[random.index(choices.count - 1)] : newest
            guard let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent(version).path) else { continue }
            return (path, String(path.dropFirst("todos/YYYY-MM/".count).dropLast(".json".count)), version, Array(bytes))
        }
        return nil
    }

    /// `python3 -c SAVE BUFFER TARGET ID ENTITY`: the buffer with one entity added, saved over the
    /// target by rename, as an editor does.
    static let pythonSave = """
        import json, os, sys
        buffer, target, id, entity = sys.argv[1:5]
        with open(buffer) as f:
            data = json.load(f)
        data["entities"][id] = json.loads(entity)
        temp = os.path.join(os.path.dirname(target), "." + os.path.basename(target) + ".edit")
        with open(temp, "w") as f:
            f.write(json.dumps(data, indent=2, sort_keys=True) + "\\n")
        os.replace(temp, target)
        """

    static func describe(_ todos: some Sequence<Todo>) -> [String: String] {
        Dictionary(uniqueKeysWithValues: todos.map { ($0.id.uuidString, "\($0.title)@\($0.date)") })
    }
}
