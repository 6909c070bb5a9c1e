// The articles show this code line for line, with its comments aligned in columns: the
// formatter leaves the file as it is written.
// swift-format-ignore-file
import Folio
import FolioTestServer
import Foundation
import Testing

/// The code of the DocC articles (Sources/Folio/Folio.docc), compiled against Folio's public API
/// (a plain `import Folio`, not `@testable`) and run on real folders, with sync against the test
/// server on 127.0.0.1.
///
/// Every ```swift block of an article is a run of lines of this file (leading indentation aside):
/// ``everyBlockOfEveryArticleIsInThisFile()`` fails when one is not, so an article cannot drift
/// from code that compiles. Edit a block here and in its article together.
/// How the articles' app shows a value (a view, a log line). The tests check the values with
/// their own expectations; nothing goes to standard output.
func show(_ items: Any...) {}

@Suite struct ArticleCodeTests {
    // MARK: GettingStarted.md

    @Suite struct GettingStarted {
        struct Todo: Entity {
            static let collection = "todos"
            static let partitioning = Partitioning<Todo>.day(\.date)   // todos/2026-11/2026-11-22.json
            static let syncMode = SyncMode.push                        // every change goes to the outbox

            var id = UUID()                                            // made on the device: works offline
            var title: String
            var date: String                                           // "YYYY-MM-DD"
            var done = false
            var priority = 0                                           // 0...3
            var createdAt = Date()
            var updatedAt = Date()
        }

        let screen = Screen()

        /// The app's UI, in the article.
        func render(_ todos: [Todo]) { screen.show(todos.map(\.title)) }

        @Test func aFirstStoreAQueryObservationAndSync() async throws {
            let data = TemporaryFolder("TodoData")
            let folder = data.url
            let server = try TestServer()
            defer { server.stop() }
            let serverURL = server.baseURL

            let store = try await Store.open(at: folder)
            try await store.write { tx in                               // all or nothing, durable when it returns
                try tx.upsert(Todo(title: "Buy milk", date: "2026-11-22"))
                try tx.upsert(Todo(title: "Call mom", date: "2026-11-22", done: true))
            }

            try await store.checkpoint()
            let file = try data.text("todos/2026-11/2026-11-22.json")
            #expect(file.contains("\"title\": \"Buy milk\"") && file.contains("\"title\": \"Call mom\""))
            #expect(try await store.pendingCommandCount() == 2)
            #expect(data.allFiles().filter { $0.hasPrefix("outbox/") && $0.hasSuffix(".json") }.count == 2)

            let open = try await store.fetch(Query<Todo>(.day("2026-11-22"), where: #Predicate { !$0.done },
                                                         sortedBy: [SortDescriptor(\.title)]))
            for todo in open { show("[ ] \(todo.title)") }

            #expect(open.map(\.title) == ["Buy milk"])

            let observation = Task {
                for try await todos in store.observe(Query<Todo>(.day("2026-11-22"), where: #Predicate { !$0.done })) {
                    render(todos)                                       // at once, then after each change that alters it
                }
            }

            #expect(await screen.waitUntilShowing(["Buy milk"]))

            if let milk = open.first {
                try await store.write { tx in
                    guard var todo = try tx.get(Todo.self, id: milk.id) else { return }
                    todo.done = true
                    todo.updatedAt = Date()
                    try tx.upsert(todo)
                }
            }

            #expect(await screen.waitUntilShowing([]))

            observation.cancel()

            _ = await observation.result

            var configuration = SyncEngine.Configuration()
            configuration.sync(Todo.self)                               // a conflict is merged field by field
            let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: serverURL),
                                    configuration: configuration)
            await engine.start()                                        // sends now, after each write, when the network is back

            let report = try await engine.drainNow()                    // for a "sync now" button or a command line tool
            show("sent \(report.sent), \(report.remaining) waiting")
            let pulled = try await engine.pull(Todo.self, partition: "2026-11-22")
            show("stored \(pulled) todos from the server")

            #expect(report.remaining == 0 && report.deadLettered == 0)
            #expect(try await store.pendingCommandCount() == 0)
            #expect(server.entities("todos").count == 2)
            #expect(server.entities("todos").values.allSatisfy { String(decoding: $0.json, as: UTF8.self).contains("\"createdAt\"") })
            #expect(try await store.fetch(Query<Todo>()).filter(\.done).count == 2)

            await engine.stop()
            try await store.close()                                     // the files are up to date; unsent commands stay on disk
        }
    }

    // MARK: EditingTheFolder.md

    @Suite struct EditingTheFolder {
        struct Todo: Entity, Equatable {
            static let collection = "todos"
            static let partitioning = Partitioning<Todo>.day(\.date)
            static let syncMode = SyncMode.push
            var id = UUID()
            var title: String
            var date: String
            var done = false
        }

        @Test func aStaleSaveIsMergedAgainstTheVersionItWasMadeFrom() async throws {
            let data = TemporaryFolder("TodoData")
            let folder = data.url
            let path = "todos/2026-11/2026-11-22.json"

            var configuration = Store.Configuration()
            configuration.editConflictRules = ["dailyStats": .storeFirst]   // derived data: Folio's value wins
            configuration.onOutsideEdit = { edits, tx in
                for change in edits where change.collection == "todos" {
                    show("edited by hand: \(change.inserted.count + change.updated.count + change.deleted.count) todos")
                }
            }
            let store = try await Store.open(at: folder, configuration: configuration)

            // A person opens the day's file in an editor; the app then marks the todo done.
            let milk = Todo(title: "Buy milk", date: "2026-11-22")
            try await store.write { tx in try tx.upsert(milk) }
            try await store.checkpoint()
            let buffer = try data.text(path)
            #expect(buffer.contains("\"revision\": "))
            try await store.write { tx in try tx.upsert(Todo(id: milk.id, title: "Buy milk", date: "2026-11-22", done: true)) }
            try await store.checkpoint()
            // The person saves the stale buffer, with a new title: both changes stay.
            try Data(buffer.replacingOccurrences(of: "Buy milk", with: "Buy oat milk").utf8).write(to: data.file(path), options: .atomic)
            #expect(try await store.get(Todo.self, id: milk.id) == Todo(id: milk.id, title: "Buy oat milk", date: "2026-11-22", done: true))
            let commands = try await store.pendingCommands()
            #expect(commands.count == 3)
            #expect(commands.last.flatMap(\.body).map { String(decoding: $0, as: UTF8.self).contains("Buy oat milk") } == true)

            // The app and the same stale buffer both change the title: the file's value wins, and
            // the merge is reported.
            try await store.write { tx in try tx.upsert(Todo(id: milk.id, title: "Milk, 2 l", date: "2026-11-22", done: true)) }
            try await store.checkpoint()
            try Data(buffer.replacingOccurrences(of: "Buy milk", with: "Buy rice milk").utf8).write(to: data.file(path), options: .atomic)
            #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy rice milk")

            for report in try await store.mergeReports() {
                show(report)                           // the file, and the entities merged without a base or changed on both sides
            }
            for stray in try await store.strayFiles() {
                show(stray)                            // a sync tool's conflict copy, an editor's backup: never read as data
            }

            let reports = try await store.mergeReports()
            #expect(reports.contains { $0.kind == .conflict && $0.path == path && $0.changed == [milk.id.uuidString] })
            try data.write("{}", to: "todos/2026-11/2026-11-22.json~")
            #expect(try await store.strayFiles().map(\.path) == ["todos/2026-11/2026-11-22.json~"])

            for version in try await store.history(of: path) {
                show(version.name, version.date, version.entityCount, version.isSave ? "a save" : "Folio's")
            }

            let history = try await store.history(of: path)
            #expect(history.count >= 4 && history.contains(where: \.isSave))
            try await store.close()
        }
    }

    // MARK: CopyingFolders.md

    @Suite struct CopyingFolders {
        struct Todo: Entity {
            static let collection = "todos"
            static let partitioning = Partitioning<Todo>.day(\.date)
            static let syncMode = SyncMode.push
            var id = UUID()
            var title: String
            var date: String
            var done = false
        }

        @Test func aSnapshotOpensAsAStoreAndAWriterOfItsOwn() async throws {
            let data = TemporaryFolder("TodoData"), snapshotData = TemporaryFolder("TodoData-snapshot")
            let backupData = TemporaryFolder("TodoData-backup")
            let (snapshotFolder, backupFolder) = (snapshotData.url, backupData.url)
            let store = try await Store.open(at: data.url)
            try await store.write { tx in try tx.upsert(Todo(title: "Buy milk", date: "2026-11-22")) }

            let snapshot = try await store.snapshot(to: snapshotFolder)     // hard links, in an instant, while writers run
            show("\(snapshot.linked) files linked, \(snapshot.copied) copied")
            try await store.backup(to: backupFolder)                        // a copy after a checkpoint, with an empty journal

            let check = try await Store.verify(at: backupFolder)
            if !check.isHealthy {
                for problem in check.errors { show(problem) }
            }

            #expect(check.isHealthy)
            #expect(snapshot.linked > 0)
            // The snapshot opens to the same state, then writes as a writer of its own.
            let copy = try await Store.open(at: snapshotFolder)
            #expect(try await copy.fetch(Query<Todo>()).map(\.title) == ["Buy milk"])
            try await copy.write { tx in try tx.upsert(Todo(title: "Call mom", date: "2026-11-22")) }
            try await store.write { tx in try tx.upsert(Todo(title: "Water plants", date: "2026-11-22")) }
            let inCopy = try await copy.pendingCommands(), inOriginal = try await store.pendingCommands()
            #expect(inCopy.count == 2 && inOriginal.count == 2)
            #expect(inCopy[0].id == inOriginal[0].id, "the command pending at the snapshot keeps its key in both")
            func writer(_ command: OutboxCommand) -> Substring { command.id.dropLast(21) }
            #expect(writer(inCopy[1]) != writer(inOriginal[1]), "each copy's new commands have keys of their own")
            #expect(writer(inOriginal[1]) == writer(inOriginal[0]))
            try await copy.close()
            try await store.close()
        }
    }

    // MARK: OutboxAndProtocol.md

    @Suite struct OutboxAndProtocol {
        struct Todo: Entity {
            static let collection = "todos"
            static let partitioning = Partitioning<Todo>.day(\.date)
            static let syncMode = SyncMode.push(coalescing: true)      // ten offline edits of a todo: one request
            var id = UUID()
            var title: String
            var date: String
            var done = false
        }

        @Test func coalescedKeyedRetriedAndDeadLettered() async throws {
            let data = TemporaryFolder("TodoData")
            let server = try TestServer()
            defer { server.stop() }
            let serverURL = server.baseURL
            let store = try await Store.open(at: data.url)

            let id = UUID()
            for title in ["Buy milk", "Buy oat milk", "Buy two litres of oat milk"] {   // three edits, offline
                try await store.write { tx in try tx.upsert(Todo(id: id, title: title, date: "2026-11-22")) }
            }
            show(try await store.pendingCommandCount())                // 1: each upsert replaced the pending one

            #expect(try await store.pendingCommandCount() == 1)

            try await store.write { tx in
                try tx.enqueue("archiveDay", payload: ["date": "2026-11-21"])   // POST {base}/_commands/archiveDay
            }

            for command in try await store.pendingCommands() {
                show(command.sequence, command.operation, command.collection ?? "", command.entityID ?? "")
                show(command.id)                                       // the idempotency key: <writer id>-<20 digits>
            }

            let pending = try await store.pendingCommands()
            #expect(pending.count == 2)
            #expect(pending[0].id.hasSuffix("-" + String(format: "%020llu", pending[0].sequence)))
            #expect(pending[1].operation == .custom("archiveDay"))

            var configuration = SyncEngine.Configuration()
            configuration.sync(Todo.self, conflicts: .threeWayMerge)   // or .serverWins, .clientWins, .keepBoth, .custom
            configuration.maxAttempts = 10                              // server errors (5xx, 429…) before a command fails for good
            configuration.initialBackoff = .seconds(1)                  // doubled after each failure, with jitter, up to maxBackoff
            let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: serverURL), configuration: configuration)

            // The server applies the upsert and the connection drops before its answer: the
            // command stays, and is sent again with the same key.
            server.inject(.dropAfterApplying)
            server.permanentRejection = { $0.path.first == "_commands" }
            let lost = try await engine.drainNow()
            #expect(lost.sent == 0 && lost.remaining == 2 && lost.nextAttempt != nil)
            await engine.networkBecameAvailable()
            let again = try await engine.drainNow()
            #expect(again.sent == 1 && again.deadLettered == 1 && again.remaining == 0)
            #expect(server.applyCount(forKey: pending[0].id) == 1)
            #expect(server.entities("todos").values.map { String(decoding: $0.json, as: UTF8.self).contains("two litres") } == [true])

            switch try await store.syncStatus(of: Todo.self, id: id) {
            case .synced: show("on the server")
            case .pending(let commands): show("\(commands) changes waiting")
            case .failed(_, let reason, _): show("refused: \(reason)")
            }

            #expect(try await store.syncStatus(of: Todo.self, id: id) == .synced)

            for failed in try await store.failedCommands() {
                show(failed.id, failed.status ?? 0, failed.reason)    // e.g. 400 and the server's words
                try await store.dropFailedCommand(failed.id)           // or retryFailedCommand(failed.id)
            }

            #expect(try await store.failedCommands().isEmpty)
            #expect(try await store.hasPendingChanges() == false)
            await engine.stop()
            try await store.close()
        }
    }

    // MARK: ChangingModels.md

    @Suite struct ChangingModels {
        /// Version 1 of the app's model, as it wrote the store (test only).
        struct EntryV1: Entity {
            static let collection = "entries"
            static let partitioning = Partitioning<EntryV1>.day(\.date)
            var id: String
            var date: String
            var title: String
            var mood: String
        }

        struct Entry: Entity, Equatable {
            static let collection = "entries"
            static let partitioning = Partitioning<Entry>.day(\.date)
            var id: String
            var date: String
            var text: String                                            // was "title"
            var mood: Int                                               // was a string: "3"
            var weather: String                                         // new, and not optional
        }

        enum V1 {
            struct Entry: Codable, Sendable {
                var id: String
                var date: String
                var title: String
                var mood: String
            }
        }

        /// A store as version 1 of the app left it.
        func storeOfVersion1() async throws -> TemporaryFolder {
            let data = TemporaryFolder("Journal")
            let old = try await Store.open(at: data.url)
            try await old.write { tx in
                try tx.upsert(EntryV1(id: "2016-01-01", date: "2016-01-01", title: "New year", mood: "3"))
                try tx.upsert(EntryV1(id: "2016-01-02", date: "2016-01-02", title: "Snow", mood: "4"))
            }
            try await old.close()
            return data
        }

        @Test func oldEntriesAreSkippedAndReportedThenMigratedOnce() async throws {
            let data = try await storeOfVersion1()
            let folder = data.url

            do {
                let store = try await Store.open(at: folder)

                for entity in try await store.undecodableEntities(Entry.self) {
                    show(entity)                                       // the file, line, column and field
                }

                let skipped = try await store.undecodableEntities(Entry.self)
                #expect(skipped.map(\.id).sorted() == ["2016-01-01", "2016-01-02"])
                #expect(skipped.allSatisfy { $0.path.hasPrefix("entries/2016-01/") && $0.line != nil })
                #expect(try await store.fetch(Query<Entry>()).isEmpty)
                try await store.close()
            }

            var migrator = Migrator()
            migrator.registerMigration("1-weather", [.setDefault("weather", .string("unknown"), in: "entries")])
            migrator.registerMigration("2-text", [
                .renameField("title", to: "text", in: "entries"),
                .changeField("mood", in: "entries") { old in old?.stringValue.flatMap(Int.init).map { .number(String($0)) } ?? old },
            ])

            show(try await migrator.pendingMigrations(at: folder))    // ["1-weather", "2-text"]
            show(try await migrator.dryRun(at: folder))               // what would change; writes nothing

            #expect(try await migrator.pendingMigrations(at: folder) == ["1-weather", "2-text"])

            var configuration = Store.Configuration()
            configuration.migrator = migrator
            let store = try await Store.open(at: folder, configuration: configuration)   // migrates if needed

            #expect(try await store.get(Entry.self, id: "2016-01-01")
                    == Entry(id: "2016-01-01", date: "2016-01-01", text: "New year", mood: 3, weather: "unknown"))
            #expect(try await migrator.pendingMigrations(at: folder).isEmpty)
            #expect(try data.text("folio.json").contains("\"2-text\""))
            try await store.close()
        }

        @Test func aTypedConversion() async throws {
            let data = try await storeOfVersion1()
            let folder = data.url

            var migrator = Migrator()
            migrator.registerMigration("1-entry-v2", [
                .convert(V1.Entry.self, from: "entries", to: Entry.self) { old in
                    Entry(id: old.id, date: old.date, text: old.title, mood: Int(old.mood) ?? 0, weather: "unknown")
                },
            ])

            var configuration = Store.Configuration()
            configuration.migrator = migrator
            let store = try await Store.open(at: folder, configuration: configuration)
            #expect(try await store.fetch(Query<Entry>()).map(\.mood) == [3, 4])
            #expect(try await store.undecodableEntities(Entry.self).isEmpty)
            try await store.close()
        }
    }

    // MARK: Performance.md

    @Suite struct Performance {
        struct Todo: Entity {
            static let collection = "todos"
            static let partitioning = Partitioning<Todo>.day(\.date)
            var id = UUID()
            var title: String
            var date: String
            var done = false
        }

        @Test func theConfigurationAndAQueryOverEveryDay() async throws {
            let data = TemporaryFolder("TodoData")
            let folder = data.url

            var configuration = Store.Configuration()
            configuration.durability = .relaxed         // commits without waiting for the disk; a power cut may lose the last ones
            configuration.partitionCacheBudget = 0      // a widget: the least memory, a file read on each access
            let store = try await Store.open(at: folder, configuration: configuration)

            try await store.write { tx in
                for day in 1...28 {
                    let date = "2026-02-" + (day < 10 ? "0" : "") + String(day)
                    try tx.upsert(Todo(title: day % 7 == 0 ? "Buy milk" : "Run", date: date, done: day == 14))
                }
            }
            try await store.checkpoint()

            let milk = try await store.fetch(Query<Todo>(.all, where: #Predicate { $0.title.contains("milk") && !$0.done }))

            #expect(milk.map(\.date).sorted() == ["2026-02-07", "2026-02-21", "2026-02-28"])
            try await store.close()
        }
    }

    // MARK: The articles and this file

    /// Each ```swift block of each article, as a run of lines of this file.
    @Test func everyBlockOfEveryArticleIsInThisFile() throws {
        let here = URL(fileURLWithPath: #filePath)
        let catalog = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Folio/Folio.docc")
        let source = Self.lines(try String(contentsOf: here, encoding: .utf8))
        let articles = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }.sorted()
        #expect(articles.count >= 7, "the catalog's articles, in \(catalog.path)")
        for article in articles {
            let text = try String(contentsOf: catalog.appendingPathComponent(article), encoding: .utf8)
            let blocks = Self.swiftBlocks(text)
            // Every article but the landing page shows code; none found means the parsing broke.
            #expect(article == "Folio.md" || !blocks.isEmpty, "\(article) has no ```swift block")
            for block in blocks where !Self.contains(source, block.lines) {
                Issue.record("""
                    \(article):\(block.line): this ```swift block is not a run of lines of ArticleCodeTests.swift, \
                    where it is compiled and run; change both together:
                    \(block.lines.joined(separator: "\n"))
                    """)
            }
        }
    }

    /// The blocks fenced with ```swift: their lines without leading indentation, and the line of
    /// the fence (1-based).
    static func swiftBlocks(_ text: String) -> [(line: Int, lines: [String])] {
        var blocks: [(line: Int, lines: [String])] = []
        var current: (line: Int, lines: [String])?
        for (index, raw) in text.components(separatedBy: "\n").enumerated() {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if var block = current {
                if line.hasPrefix("```") {
                    blocks.append(block)
                    current = nil
                } else {
                    block.lines.append(String(line))
                    current = block
                }
            } else if line.hasPrefix("```swift") {
                current = (index + 1, [])
            }
        }
        return blocks
    }

    static func lines(_ text: String) -> [String] {
        text.components(separatedBy: "\n").map { String($0.drop { $0 == " " || $0 == "\t" }) }
    }

    /// Whether `block` is a run of consecutive lines of `source`.
    static func contains(_ source: [String], _ block: [String]) -> Bool {
        guard !block.isEmpty, block.count <= source.count else { return false }
        return (0...(source.count - block.count)).contains { start in
            source[start..<(start + block.count)].elementsEqual(block)
        }
    }

    /// What the getting-started article's `render` showed: the titles, in order.
    final class Screen: @unchecked Sendable {
        private let lock = NSLock()
        private var frames: [[String]] = []

        func show(_ titles: [String]) { lock.withLock { frames.append(titles) } }

        /// Waits until the last frame shown is `titles`, 10 seconds at most.
        func waitUntilShowing(_ titles: [String]) async -> Bool {
            for _ in 0..<1000 {
                if lock.withLock({ frames.last }) == titles { return true }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return lock.withLock { frames.last } == titles
        }
    }
}
