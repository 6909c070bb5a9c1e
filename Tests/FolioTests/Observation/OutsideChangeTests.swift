@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// Changes made to the folder by anything but this store: a second process, a text editor
/// saving in place, rsync renaming a file into place, a sync tool's conflict copies.
@Suite struct OutsideChangeTests {
    /// A store with one checkpointed day file, observed.
    private func observedStore(_ folder: TemporaryFolder, log: LogRecorder = LogRecorder()) async throws
        -> (store: Store, changes: Collector<ChangeSet>, milk: Todo)
    {
        let store = try await Store.open(at: folder.url, configuration: .testing(log: log.handler))
        let milk = todo("Buy milk", on: "2026-11-22")
        try await store.write { tx in try tx.upsert(milk) }
        try await store.checkpoint()
        _ = try await store.fetch(Query<Todo>(.day("2026-11-22")))
        return (store, Collector(await store.changes()), milk)
    }

    private let day = "todos/2026-11/2026-11-22.json"

    @Test func anEditorSavingInPlaceIsPickedUp() async throws {
        let folder = TemporaryFolder()
        let (store, changes, milk) = try await observedStore(folder)
        let edited = try folder.text(day).replacingOccurrences(of: "Buy milk", with: "Buy oat milk")
        // In place: same inode, truncated and rewritten, as vim or nano save.
        let handle = try FileHandle(forWritingTo: folder.file(day))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(edited.utf8))
        try handle.close()
        #expect(await changes.wait(forCount: 1))
        // The edit is adopted: it queues a command, so the todo's sync status changes with it.
        #expect(
            changes.items.first
                == ChangeSet(
                    collection: "todos", updated: [milk.id.uuidString], syncStatusChanged: [milk.id.uuidString],
                    partitions: ["2026-11-22"], origin: .outsideEdit))
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy oat milk")
        try await store.close()
    }

    @Test func rsyncRenamingAFileIntoPlaceIsPickedUp() async throws {
        let folder = TemporaryFolder()
        let log = LogRecorder()
        let (store, changes, milk) = try await observedStore(folder, log: log)
        let extra = todo("From the laptop", on: "2026-11-22")
        let text = try folder.text(day).replacingOccurrences(
            of: "\"entities\": {",
            with: """
                "entities": {
                    "\(extra.id.uuidString)": {"createdAt": "2026-11-22T09:00:00.000Z", "date": "2026-11-22", "done": false, "id": "\(extra.id.uuidString)", "priority": 0, "title": "From the laptop", "updatedAt": "2026-11-22T09:00:00.000Z"},
                """)
        // rsync writes a hidden temp file next to the target, then renames it over the target.
        let temp = "todos/2026-11/.2026-11-22.json.Xq83Zb"
        try folder.write(text, to: temp)
        #expect(rename(folder.file(temp).path, folder.file(day).path) == 0)
        #expect(await changes.wait(forCount: 1))
        #expect(
            changes.items.first
                == ChangeSet(
                    collection: "todos", inserted: [extra.id.uuidString], syncStatusChanged: [extra.id.uuidString],
                    partitions: ["2026-11-22"], origin: .outsideEdit))
        #expect(try await store.fetch(Query<Todo>(.day("2026-11-22"))).map(\.title).sorted() == ["Buy milk", "From the laptop"])
        #expect(try await store.get(Todo.self, id: milk.id) == milk)
        try await store.close()
    }

    @Test func aDayFileThatArrivesIsAnnouncedAndObserved() async throws {
        let folder = TemporaryFolder()
        let (store, changes, _) = try await observedStore(folder)
        let month = Collector(store.observe(Query<Todo>(.month("2026-11"))))
        #expect(await month.wait(forCount: 1))
        let arriving = todo("Arrived", on: "2026-11-25")
        let text = try folder.text(day).replacingOccurrences(of: "2026-11-22", with: "2026-11-25")
            .replacingOccurrences(of: try #require(try await store.fetch(Query<Todo>(.day("2026-11-22"))).first?.id.uuidString), with: arriving.id.uuidString)
        try folder.write(text, to: "todos/2026-11/.incoming")
        _ = rename(folder.file("todos/2026-11/.incoming").path, folder.file("todos/2026-11/2026-11-25.json").path)
        #expect(await changes.wait { $0.contains { $0.partitions == ["2026-11-25"] } })
        #expect(changes.items.last?.ids == [arriving.id.uuidString] && changes.items.last?.origin == .outsideEdit)
        #expect(await month.wait(forCount: 2))
        #expect(month.items.last?.count == 2)
        try await store.close()
    }

    @Test func aBrokenHandEditIsReportedAndTheLastGoodStateServed() async throws {
        let folder = TemporaryFolder()
        let log = LogRecorder()
        let (store, changes, milk) = try await observedStore(folder, log: log)
        let good = try folder.text(day)
        let broken = good.replacingOccurrences(of: "\"done\": false,", with: "\"done\": nope,")
        try folder.write(broken, to: day)
        #expect(
            await (0..<3000).asyncContains { _ in
                try? await Task.sleep(for: .milliseconds(5))
                return log.messages.contains { $0.level == .error && $0.path == day }
            })
        let problems = try await store.unreadableFiles()
        #expect(problems.count == 1)
        #expect(problems.first?.path == day && problems.first?.line != nil && problems.first?.column != nil)
        // The last good state is served; a write of that day waits in the journal and the file
        // keeps the person's bytes.
        #expect(try await store.fetch(Query<Todo>(.day("2026-11-22"))) == [milk])
        let bread = todo("Buy bread", on: "2026-11-22")
        try await store.write { tx in try tx.upsert(bread) }
        await #expect(throws: FolioError.self) { try await store.checkpoint() }
        #expect(try folder.text(day) == broken)
        // Fixed by hand: the fix is read, this store's committed change goes on top.
        try folder.write(good.replacingOccurrences(of: "Buy milk", with: "Buy milk!"), to: day)
        #expect(await changes.wait { $0.contains { $0.origin == .outsideEdit && $0.updated.contains(milk.id.uuidString) } })
        try await store.checkpoint()
        let titles = try await store.fetch(Query<Todo>(.day("2026-11-22"))).map(\.title).sorted()
        #expect(titles == ["Buy bread", "Buy milk!"])
        #expect(try folder.text(day).contains("Buy bread") && folder.text(day).contains("Buy milk!"))
        #expect(try await store.unreadableFiles().isEmpty)
        try await store.close()
    }

    @Test func conflictCopiesAndTempFilesAreNeverReadAndAreReported() async throws {
        let folder = TemporaryFolder()
        let log = LogRecorder()
        let (store, _, milk) = try await observedStore(folder, log: log)
        let stranger = try folder.text(day).replacingOccurrences(of: milk.id.uuidString, with: UUID().uuidString)
        let strays = [
            "todos/2026-11/2026-11-22.sync-conflict-20261122-101010-ABCDEF7.json",
            "todos/2026-11/2026-11-22 (Mina's conflicted copy 2026-11-22).json",
            "todos/2026-11/2026-11-22 2.json",
            "todos/2026-11/.2026-11-22.json.Xq83Zb",
            "todos/2026-11/2026-11-22.json~",
            "todos/2026-11/.2026-11-22.json.swp",
            "tags 2.json",
        ]
        for path in strays { try folder.write(stranger, to: path) }
        #expect(
            await (0..<3000).asyncContains { _ in
                try? await Task.sleep(for: .milliseconds(5))
                return log.messages.filter { $0.level == .warning && $0.text.contains("conflict copy") }.count == 4
            })
        #expect(try await store.fetch(Query<Todo>(.month("2026-11"))) == [milk])
        let found = try await store.strayFiles()
        let original = "todos/2026-11/2026-11-22.json"
        #expect(
            found == [
                StrayFile(path: "tags 2.json", kind: .conflictCopy(original: "tags.json")),
                StrayFile(path: "todos/2026-11/.2026-11-22.json.Xq83Zb", kind: .temporary),
                StrayFile(path: "todos/2026-11/.2026-11-22.json.swp", kind: .editorBackup),
                StrayFile(path: "todos/2026-11/2026-11-22 (Mina's conflicted copy 2026-11-22).json", kind: .conflictCopy(original: original)),
                StrayFile(path: "todos/2026-11/2026-11-22 2.json", kind: .conflictCopy(original: original)),
                StrayFile(path: "todos/2026-11/2026-11-22.json~", kind: .editorBackup),
                StrayFile(path: "todos/2026-11/2026-11-22.sync-conflict-20261122-101010-ABCDEF7.json", kind: .conflictCopy(original: original)),
            ])
        try await store.close()
        for path in strays { #expect(folder.exists(path)) }
    }

    /// Two real processes, neither of them the test runner: one observes the folder (`watch`),
    /// the other commits one transaction (`write`). Both print the system's monotonic clock, at
    /// the writer's acknowledgement and at the observer's announcement, so the test runner's own
    /// scheduling (starved by other suites on a loaded machine) does not enter the figure. The
    /// issue asks for under one second: the best of up to five tries must make it.
    @Test func aSecondProcessWriteIsAnnouncedWithinASecond() async throws {
        let folder = TemporaryFolder("two")
        let logs = folder.url.deletingLastPathComponent()
        // Create the store first, so the observer opens an existing one.
        try await Store.open(at: folder.url, configuration: .testing()).close()
        var latencies: [Double] = []
        for attempt in 1...5 {
            // Its log (what the folder watcher noticed, what it read of the journal) shows in a failure.
            // It lives until it has seen the change or this test is gone (at most 300 s), not a
            // fixed minute: on a loaded machine this test's own task may wait over a minute
            // between seeing `ready` and starting the writer (seen: 76 s).
            let watcher = try CrashChild(
                ["watch", folder.url.path, "300", "1"], logs: logs, name: "watch-\(attempt)",
                environment: ["FOLIO_WATCH_DEBUG": "1"])
            var ready = false
            for _ in 0..<6000 where !ready {
                ready = watcher.lines.contains("ready")
                if !ready { try await Task.sleep(for: .milliseconds(5)) }
            }
            #expect(ready, "the observer never subscribed: \(watcher.errorText)")
            let writer = try CrashChild(
                ["write", folder.url.path, "\(attempt)", "1", "full", "w\(attempt)", "--max-seconds", "60"],
                logs: logs, name: "announce-\(attempt)")
            #expect(await writer.waitForExit(before: .now + .seconds(60)), "\(writer.errorText)")
            let exited = await watcher.waitForExit(before: .now + .seconds(60))
            let observerEnd =
                exited
                ? "\(watcher.process.terminationReason == .exit ? "exit status" : "signal") \(watcher.process.terminationStatus)"
                : "still running a minute after the writer"
            watcher.kill()
            writer.kill()
            func stamp(_ lines: [String], _ prefix: String) -> Double? {
                lines.first { $0.hasPrefix(prefix) }.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            }
            let acked = try #require(stamp(writer.lines, "acked "), "writer: \(writer.lines) \(writer.errorText)")
            let announced = try #require(
                stamp(watcher.lines, "change slots "),
                "observer (\(observerEnd)): \(watcher.lines) \(watcher.errorText); writer: \(writer.lines)")
            #expect(watcher.lines.contains { $0.hasPrefix("change slots otherProcess") })
            latencies.append(max(0, announced - acked) / 1e9)
            if latencies.last! < 1 { break }
        }
        #expect(latencies.min()! < 1, "latencies (s): \(latencies)")
    }
}

extension Sequence where Element: Sendable {
    /// Whether `predicate` holds for some element, evaluated one after the other.
    func asyncContains(_ predicate: (Element) async -> Bool) async -> Bool {
        for element in self where await predicate(element) { return true }
        return false
    }
}
