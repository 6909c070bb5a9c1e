@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

@Suite("folio recover and backup", .serialized)
struct RecoverTests {
    /// Runs the crash child with checkpoints put off, so its transactions pile up in the journal,
    /// and SIGKILLs it once it acknowledged `acks` of them.
    static func killedWriter(_ folder: TemporaryFolder, logs: URL, outbox: Bool = false, acks: Int = 6) async throws -> Int {
        var arguments = ["write", folder.url.path, "7", "100000", "full", "K", "--delay-ms", "600000", "--threshold-kib", "100000", "--max-seconds", "900"]
        if outbox { arguments.append("--outbox") }
        let child = try CrashChild(arguments, logs: logs, name: "writer")
        let deadline = ContinuousClock.now + .seconds(60)
        while child.acks.count < acks && ContinuousClock.now < deadline && child.process.isRunning {
            try await Task.sleep(for: .milliseconds(10))
        }
        child.kill()
        try #require(child.acks.count >= acks, "the writer acknowledged \(child.acks.count) transactions: \(child.errorText)")
        return child.acks.last ?? 0
    }

    @Test("after a kill -9: recover replays the journal, drops the torn tail, removes temp files; the folder verifies and keeps every acknowledged transaction")
    func recoverAfterKill() async throws {
        let folder = TemporaryFolder()
        let logs = folder.url.deletingLastPathComponent()
        let acked = try await Self.killedWriter(folder, logs: logs, outbox: true)
        try folder.write("half a file", to: ".folio/tmp/999-1-2026-01-25.json")
        try folder.write("another", to: ".folio/tmp/999-2-00000000000000000003.json")
        let handle = try FileHandle(forWritingTo: folder.file(".folio/journal"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 21))
        try handle.close()

        let before = try await Store.verify(at: folder.url)
        #expect(before.problems.contains { $0.kind == .journal && $0.message.contains("committed transaction") })
        #expect(before.problems.filter { $0.kind == .tempFile }.count == 2)

        let report = try await Store.recover(at: folder.url)
        let kinds = report.actions.map(\.kind)
        #expect(kinds.contains(.replayedJournal))
        #expect(kinds.contains(.droppedTornTail))
        #expect(kinds.filter { $0 == .removedTempFile }.count == 2)
        #expect(report.remaining.problems.isEmpty, "\(report.remaining.problems.map(\.description))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file(".folio/tmp").path).isEmpty)
        #expect(try Data(contentsOf: folder.file(".folio/journal")).count == Journal.headerSize)

        let found = await StoreCheck.run(folder.url, acked: ["K": acked])
        #expect(found.violations.isEmpty, "\(found.violations)")
    }

    @Test("an unreadable partition file is moved to .folio/quarantine/, byte for byte; the journal's change to it lands in a new file")
    func quarantinesUnreadableFiles() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(todo("Late", on: "2026-11-22")) }
        let broken = "{\n  \"entities\": { oops\n}\n"
        try folder.write(broken, to: "todos/2026-11/2026-11-22.json")
        try folder.write("not json", to: ".folio/attempts.json")
        try folder.write("garbage\n", to: ".folio/index/todos")
        try folder.write("{\"sequence\": 1}", to: "outbox/00000000000000000099.json")

        let report = try await Store.recover(at: folder.url)
        try await store.close()
        let moved = try #require(report.actions.first { $0.path == "todos/2026-11/2026-11-22.json" })
        #expect(moved.kind == .quarantined)
        #expect(moved.message.contains("1 committed change(s)"), "\(moved.message)")
        #expect(try folder.text(".folio/quarantine/todos/2026-11/2026-11-22.json") == broken)
        #expect(try folder.text(".folio/quarantine/attempts.json") == "not json")
        // Deleted, then rebuilt by the store recover opened.
        #expect(report.actions.contains { $0.kind == .removedDerivedFile && $0.path == ".folio/index/todos" })
        if folder.exists(".folio/index/todos") { #expect(try folder.text(".folio/index/todos").hasPrefix("folio-index 1\n")) }
        #expect(folder.exists("outbox/quarantine/00000000000000000099.json"))
        #expect(report.actions.contains { $0.kind == .quarantined && $0.path == "outbox/00000000000000000099.json" })
        #expect(report.remaining.isHealthy, "\(report.remaining.errors)")
        #expect(report.remaining.warnings.allSatisfy { $0.kind == .quarantined })

        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        let day = try await reopened.fetch(Query<Todo>(.day("2026-11-22")))
        #expect(day.map(\.title) == ["Late"])
        try await reopened.close()
    }

    @Test("recover refuses a folder that is not a store, and creates nothing there")
    func refusesNonStores() async throws {
        let folder = TemporaryFolder()
        try folder.write("hello", to: "notes.txt")
        await expectFolioError(.unsupportedFormat) { try await Store.recover(at: folder.url) }
        #expect(folder.allFiles() == ["notes.txt"])
    }

    @Test("backup while another process writes gives a folder that verifies and opens with every transaction acknowledged before it")
    func backupWhileWriting() async throws {
        let folder = TemporaryFolder()
        let logs = folder.url.deletingLastPathComponent()
        let child = try CrashChild(
            ["write", folder.url.path, "11", "100000", "full", "B", "--delay-ms", "5", "--max-seconds", "900"], logs: logs, name: "backup-writer")
        defer { child.kill() }
        let deadline = ContinuousClock.now + .seconds(60)
        while child.acks.count < 5 && ContinuousClock.now < deadline && child.process.isRunning {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(child.acks.count >= 5, "\(child.errorText)")
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let ackedBefore = child.acks.last ?? 0
        let copy = logs.appendingPathComponent("copy")
        try await store.backup(to: copy)
        try await store.close()
        #expect(child.process.isRunning, "the writer kept running through the backup")
        child.kill()
        let report = try await Store.verify(at: copy)
        #expect(report.problems.isEmpty, "\(report.problems.map(\.description))")
        let found = await StoreCheck.run(copy, acked: ["B": ackedBefore])
        #expect(found.violations.isEmpty, "\(found.violations)")
    }
}
