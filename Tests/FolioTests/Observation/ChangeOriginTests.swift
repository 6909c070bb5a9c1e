@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// Who an announcement says changed the data: another Folio process (`.otherProcess`) or a
/// person (`.outsideEdit`), whatever order the folder's events reach the observing store in.
@Suite struct ChangeOriginTests {
    /// An observing store, another store on the same folder (another process, as far as the
    /// journal and the files tell) and a person editing day files with `sed -i`. The observer's
    /// watcher is stopped: the test hands it the folder's events itself, in the orders a real
    /// watcher can deliver them (all at once; the journal first and the files in a later batch;
    /// an unrelated read in between, which takes in the journal another process has just emptied;
    /// a read of the day itself). The model is who last changed each todo; every announced todo
    /// must name that origin, and every change must be announced.
    @Test func everyChangeIsAnnouncedAsWhoMadeIt() async throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_ORIGIN_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let folder = TemporaryFolder()
        let days = ["2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05"]
        let observer = try await Store.open(at: folder.url, configuration: .testing())
        var writer = try await Store.open(at: folder.url, configuration: .testing())
        _ = try await observer.fetch(Query<Todo>(.month("2026-11")))
        let changes = Collector(await observer.changes())
        await observer.silenceWatcher()

        var todos: [UUID: Todo] = [:]
        var lastChange: [String: ChangeSet.Origin] = [:]   // id → who changed it last
        var inFile: Set<UUID> = []   // todos whose newest state the file holds
        var seen = 0
        var (byProcess, byHand, misattributed, unannounced) = (0, 0, 0, 0)
        var problems: [String] = []
        for round in 0..<40 {
            var changed: [String: ChangeSet.Origin] = [:]
            var paths: Set<String> = []
            var day = days[0]
            let editable = inFile.sorted { $0.uuidString < $1.uuidString }
            if !editable.isEmpty && pick(3) == 0 {
                // A person retitles a todo whose file holds its newest state, with sed -i or
                // with python saving by rename.
                var edited = todos[editable[pick(editable.count)]]!
                let title = "typed \(round)"
                let path = "todos/2026-11/\(edited.date).json"
                // (Removals are left out: removing the todo Folio added last reads as an editor
                // saving its old buffer, and the todo stays; FORMAT.md, "Limits of the merge".)
                switch pick(3) {
                case 0:
                    try HandEditSyncTests.editByHand(folder.file(path), id: edited.id.uuidString, title: title)
                    edited.title = title
                    todos[edited.id] = edited
                default:
                    #expect(runTool("/bin/sed", ["-i", "s/\"title\": \"\(edited.title)\"/\"title\": \"\(title)\"/", folder.file(path).path]) == nil)
                    edited.title = title
                    todos[edited.id] = edited
                }
                changed[edited.id.uuidString] = .outsideEdit
                paths.insert(path)
                day = edited.date
                byHand += 1
            } else {
                // Another process adds or retitles one or two todos, then checkpoints or not.
                var written: [Todo] = []
                for _ in 0...pick(2) {
                    let existing = todos.keys.sorted { $0.uuidString < $1.uuidString }
                    var next: Todo
                    if existing.isEmpty || pick(2) == 0 {
                        next = todo("", on: days[pick(days.count)])
                        next.id = random.uuid()
                    } else {
                        next = todos[existing[pick(existing.count)]]!
                    }
                    next.title = "written \(round) \(written.count)"
                    written.append(next)
                }
                try await writer.write { [written] tx in for todo in written { try tx.upsert(todo) } }
                for todo in written {
                    todos[todo.id] = todo
                    changed[todo.id.uuidString] = .otherProcess
                    inFile.remove(todo.id)
                    day = todo.date
                }
                paths.insert(".folio/journal")
                if pick(6) == 0 {
                    // A short-lived process: it checkpoints as it closes.
                    try await writer.close()
                    writer = try await Store.open(at: folder.url, configuration: .testing())
                    inFile = Set(todos.keys)
                    for date in Set(todos.values.map(\.date)) { paths.insert("todos/2026-11/\(date).json") }
                } else if pick(2) == 0 {
                    try await writer.checkpoint()
                    inFile = Set(todos.keys)
                    for date in Set(todos.values.map(\.date)) { paths.insert("todos/2026-11/\(date).json") }
                }
                byProcess += 1
            }
            // The events, as a watcher may deliver them.
            let files = paths.filter { $0 != ".folio/journal" }
            let delivery = pick(4)
            if ProcessInfo.processInfo.environment["FOLIO_ORIGIN_DEBUG"] != nil {
                print("round \(round): \(changed) delivery \(delivery) paths \(paths.sorted())")
            }
            switch delivery {
            case 0:
                await observer.noticeOutsideChanges(paths)
            case 1:
                _ = try await observer.fetch(Query<Tag>(.all))
                await observer.noticeOutsideChanges(files)
            case 2:
                await observer.noticeOutsideChanges([".folio/journal"])
                await observer.noticeOutsideChanges(files)
            default:
                _ = try await observer.fetch(Query<Todo>(.day(day)))
                await observer.noticeOutsideChanges(paths)
            }
            for (id, origin) in changed { lastChange[id] = origin }
            _ = await changes.wait(seconds: 5) { items in
                let announced = Set(items.dropFirst(seen).filter { $0.origin != .thisProcess }.flatMap(\.ids))
                return changed.keys.allSatisfy(announced.contains)
            }
            let items = changes.items
            let announced = items.dropFirst(seen).filter { $0.origin != .thisProcess }
            seen = items.count
            if ProcessInfo.processInfo.environment["FOLIO_ORIGIN_DEBUG"] != nil { print("round \(round) announced: \(announced)") }
            for changeSet in announced {
                for id in changeSet.ids where lastChange[id] != changeSet.origin {
                    misattributed += 1
                    problems.append("round \(round): \(id) announced as \(changeSet.origin), last changed by \(lastChange[id].map { "\($0)" } ?? "nobody")")
                }
            }
            for id in changed.keys where !announced.contains(where: { $0.ids.contains(id) }) {
                unannounced += 1
                problems.append("round \(round): \(id) changed by \(changed[id]!) was never announced")
            }
        }
        try await writer.close()
        try await observer.close()
        // Nothing was lost: every todo holds its last change, whoever made it.
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        var lost = 0
        for (id, expected) in todos {
            let title = try await reopened.get(Todo.self, id: id)?.title
            if title != expected.title {
                lost += 1
                problems.append("\(id) holds \(title ?? "nothing"), last changed to \(expected.title)")
            }
        }
        try await reopened.close()
        print(
            "change origins: \(byProcess) changes by another process, \(byHand) by hand, \(misattributed) misattributed, \(unannounced) unannounced, \(lost) lost (seed \(seed))"
        )
        #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(8))")
    }

    /// Another process's checkpoint is caught between replacing a file and emptying the journal:
    /// the observer reads a record whose file already holds it. The record must still be
    /// announced (it was not when the observer had to load the file to see what changed: the
    /// record looked like no change, and the folder-watcher test saw no announcement under load).
    /// The folder is put in that state by hand: the journal as it was before the checkpoint,
    /// the files as the checkpoint left them.
    @Test func aRecordWhoseFileACheckpointAlreadyWroteIsAnnounced() async throws {
        let folder = TemporaryFolder()
        let (observer, changes, writer, stat) = try await Self.observedCommit(in: folder)
        let journal = folder.file(".folio/journal")
        let before = try Data(contentsOf: journal)
        try await writer.checkpoint()
        let after = try Data(contentsOf: journal)
        try before.write(to: journal)
        await observer.noticeOutsideChanges([".folio/journal"])
        try after.write(to: journal)
        #expect(await changes.wait(seconds: 5) { $0.contains { $0.ids.contains(stat.id) } })
        #expect(changes.items.first { $0.ids.contains(stat.id) }?.origin == .otherProcess)
        try await writer.close()
        try await observer.close()
    }

    /// Another process opens, commits and closes (checkpointing, and starting a new generation)
    /// between two looks of an observer: the commit is only in the files by then, and it is
    /// announced from them, as a change of that other process. (What the folder-watcher test's
    /// child pair does when the writer is fast; written while looking for a missed announcement,
    /// which this path does not explain.)
    @Test func aCommitCheckpointedBetweenTwoLooksIsAnnounced() async throws {
        let folder = TemporaryFolder()
        try await Store.open(at: folder.url, configuration: .testing()).close()
        let (observer, changes, writer, stat) = try await Self.observedCommit(in: folder)
        try await writer.close()   // checkpoints, and starts a new generation
        await observer.noticeOutsideChanges([".folio/journal"])
        #expect(await changes.wait(seconds: 5) { $0.contains { $0.ids.contains(stat.id) } }, "\(changes.items)")
        #expect(changes.items.first { $0.ids.contains(stat.id) }?.origin == .otherProcess)
        try await observer.close()
    }

    /// An observing store (its folder watcher stopped: the test says when it looks) and a second
    /// store that has committed one DailyStat, a collection without commands (a command would
    /// announce the entity by its sync status).
    private static func observedCommit(in folder: TemporaryFolder) async throws -> (Store, Collector<ChangeSet>, Store, DailyStat) {
        let observer = try await Store.open(at: folder.url, configuration: .testing())
        let changes = Collector(await observer.changes())
        await observer.silenceWatcher()
        let writer = try await Store.open(at: folder.url, configuration: .testing())
        let stat = DailyStat(date: "2026-11-22", completed: 3, tagStats: [])
        try await writer.write { tx in try tx.upsert(stat) }
        return (observer, changes, writer, stat)
    }
}
