@testable import Folio
import FolioTestServer
import Foundation
import Testing

/// What a progress handler heard, from whatever thread the library called it on.
final class ProgressRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var reports: [FolioProgress] = []

    var handler: ProgressHandler { { [self] progress in lock.withLock { reports.append(progress) } } }
    var all: [FolioProgress] { lock.withLock { reports } }

    /// The reports grouped by consecutive phase, in order.
    var phases: [(phase: FolioProgress.Phase, reports: [FolioProgress])] {
        var result: [(phase: FolioProgress.Phase, reports: [FolioProgress])] = []
        for report in all {
            if result.last?.phase == report.phase { result[result.count - 1].reports.append(report) } else { result.append((report.phase, [report])) }
        }
        return result
    }

    /// Each phase runs from 0 up to its total without going back, the total never changes, and
    /// the last report is the total; the phases are `expected`, in order.
    func expectComplete(_ expected: [FolioProgress.Phase], atLeast minimum: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let phases = self.phases
        #expect(phases.map(\.phase) == expected, sourceLocation: sourceLocation)
        for (phase, reports) in phases {
            let total = reports[0].total
            #expect(total >= minimum, "\(phase): total \(total)", sourceLocation: sourceLocation)
            #expect(reports.first?.completed == 0, "\(phase)", sourceLocation: sourceLocation)
            #expect(reports.allSatisfy { $0.total == total && (0...total).contains($0.completed) }, "\(phase)", sourceLocation: sourceLocation)
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed <= $1.completed }, "\(phase) goes back", sourceLocation: sourceLocation)
            #expect(reports.last?.completed == total, "\(phase) ends at \(reports.last?.completed ?? -1) of \(total)", sourceLocation: sourceLocation)
        }
    }

    /// The phases are `expected`, in order, each with its total, and each reports every unit on
    /// its own: 0, 1, 2, … up to its total.
    func expectEveryUnit(_ expected: [(phase: FolioProgress.Phase, total: Int)], sourceLocation: SourceLocation = #_sourceLocation) {
        let phases = self.phases
        #expect(phases.map(\.phase) == expected.map(\.phase), sourceLocation: sourceLocation)
        for ((phase, reports), (_, total)) in zip(phases, expected) {
            #expect(
                reports.allSatisfy { $0.total == total }, "\(phase): totals \(Set(reports.map(\.total)).sorted()), expected \(total)",
                sourceLocation: sourceLocation)
            let counts = reports.map(\.completed)
            #expect(
                counts.elementsEqual(0...total), "\(phase): counts \(counts.prefix(5))… \(counts.suffix(2)) (\(counts.count) reports)",
                sourceLocation: sourceLocation)
        }
    }
}

/// A closed store of a few hundred files: 300 todos on 300 days (a file each), each with its
/// pending command (another file each).
func storeOfAFewHundredFiles(in folder: TemporaryFolder) async throws {
    let store = try await Store.open(at: folder.url, configuration: .testing())
    let start = Date(timeIntervalSince1970: 1_767_225_600)   // 2026-01-01
    try await store.write { tx in
        for day in 0..<300 {
            let date = ISO8601DateFormatter.string(
                from: start.addingTimeInterval(Double(day) * 86_400), timeZone: TimeZone(identifier: "UTC")!,
                formatOptions: [.withFullDate, .withDashSeparatorInDate])
            try tx.upsert(Todo(id: UUID(), title: "Todo \(day)", date: date))
        }
    }
    try await store.close()
}

@Suite("progress of long maintenance work")
struct ProgressTests {
    @Test("verify, recover, backup (read-write and read-only) and snapshot report progress that rises to its total")
    func libraryReportsProgress() async throws {
        let folder = TemporaryFolder()
        try await storeOfAFewHundredFiles(in: folder)

        let verified = ProgressRecorder()
        let report = try await Store.verify(at: folder.url, progress: verified.handler)
        #expect(report.isHealthy)
        verified.expectComplete([.checking], atLeast: 600)
        #expect(verified.all.count >= 600, "one report per file read")

        let recovered = ProgressRecorder()
        _ = try await Store.recover(at: folder.url, progress: recovered.handler)
        recovered.expectComplete([.checking, .repairing, .verifying], atLeast: 600)

        let store = try await Store.open(at: folder.url, configuration: .testing())
        let copied = ProgressRecorder(), linked = ProgressRecorder()
        let backup = folder.url.deletingLastPathComponent().appendingPathComponent("backup")
        let snapshot = folder.url.deletingLastPathComponent().appendingPathComponent("snapshot")
        try await store.backup(to: backup, progress: copied.handler)
        let snapshotReport = try await store.snapshot(to: snapshot, progress: linked.handler)
        try await store.close()
        copied.expectComplete([.copying], atLeast: 600)
        linked.expectComplete([.linking], atLeast: 600)
        #expect(linked.all.last?.total == snapshotReport.linked + snapshotReport.copied)
        #expect(try await Store.verify(at: backup).isHealthy)

        var readOnly = Store.Configuration.testing()
        readOnly.readOnly = true
        let reader = try await Store.open(at: folder.url, configuration: readOnly)
        let copiedReadOnly = ProgressRecorder()
        let second = folder.url.deletingLastPathComponent().appendingPathComponent("backup-read-only")
        try await reader.backup(to: second, progress: copiedReadOnly.handler)
        try await reader.close()
        copiedReadOnly.expectComplete([.copying], atLeast: 600)
        // A migration's and its dry run's: MigrationProgressTests.
    }

    @Test("verify without a handler still works; a folder that does not exist, or is not a store, reports no progress")
    func noHandler() async throws {
        let folder = TemporaryFolder()
        try await MaintenanceFixture.store(in: folder)
        #expect(try await Store.verify(at: folder.url).isHealthy)
        let missing = ProgressRecorder()
        await #expect(throws: FolioError.self) {
            try await Store.verify(at: folder.url.appendingPathComponent("nowhere"), progress: missing.handler)
        }
        #expect(missing.all.isEmpty, "a folder that does not exist has no files to count")
        let notAStore = TemporaryFolder()
        try notAStore.write("{}", to: "a/b.json")
        let nothing = ProgressRecorder()
        #expect(try await !Store.verify(at: notAStore.url, progress: nothing.handler).isHealthy)
        #expect(nothing.all.isEmpty, "a folder that is not a store is not walked")
    }
}

/// The `folio` binary with its standard error on a pseudo-terminal (python3's `pty`), standard
/// output to a file, as a person at a terminal redirecting the output would run it.
enum TerminalRun {
    struct Outcome {
        var code: Int32
        var output: String
        /// What the terminal received, as bytes turned into text (`\r` kept).
        var terminal: String
    }

    static let script = #"""
        import os, pty, select, subprocess, sys, time
        out_path, term_path, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
        master, slave = pty.openpty()
        with open(out_path, "wb") as out:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=slave)
        os.close(slave)
        data, deadline = b"", time.monotonic() + 60
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                data += chunk
            elif child.poll() is not None:
                break
        if child.poll() is None:
            child.kill()
        code = child.wait(timeout=10)
        with open(term_path, "wb") as term:
            term.write(data)
        sys.exit(code if code >= 0 else 128 - code)
        """#

    static func run(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> Outcome {
        let logs = FileManager.default.temporaryDirectory.appendingPathComponent("folio-pty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: logs) }
        let out = logs.appendingPathComponent("out"), term = logs.appendingPathComponent("term"), script = logs.appendingPathComponent("folio_terminal.py")
        try Data(Self.script.utf8).write(to: script)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, out.path, term.path, try CrashChild.executable("folio").path] + arguments
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try await FolioTool.finish(process, within: 90, "folio \(arguments) under a pty", sourceLocation: sourceLocation)
        return Outcome(
            code: process.terminationStatus,
            output: String(decoding: (try? Data(contentsOf: out)) ?? Data(), as: UTF8.self),
            terminal: String(decoding: (try? Data(contentsOf: term)) ?? Data(), as: UTF8.self))
    }
}

@Suite("the folio binary's progress line", .serialized)
struct CLIProgressTests {
    @Test("on a terminal, verify, recover, backup, snapshot and migrate (and its dry run) draw a progress line with \\r on stderr, cleared before they print")
    func progressOnATerminal() async throws {
        let folder = TemporaryFolder()
        try await storeOfAFewHundredFiles(in: folder)
        let parent = folder.url.deletingLastPathComponent()
        let plan = parent.appendingPathComponent("plan.json")
        try Data(#"{"migrations": [{"name": "1-weather", "steps": [{"setDefault": "weather", "value": "unknown", "in": "todos"}]}]}"#.utf8).write(to: plan)
        // The last count of a phase is always drawn: a migration's, file by file, reaches the 300
        // day files read, then the 601 files it writes (with the 300 commands and folio.json).
        let runs: [(command: String, arguments: [String], lastCounts: [String])] = [
            ("verify", ["verify", folder.url.path], []),
            ("recover", ["recover", folder.url.path], []),
            ("backup", ["backup", folder.url.path, parent.appendingPathComponent("backup").path], []),
            ("snapshot", ["snapshot", folder.url.path, parent.appendingPathComponent("snapshot").path], []),
            ("migrate", ["migrate", "--plan", plan.path, "--dry-run", folder.url.path], ["migrating 300 of 300 files"]),
            (
                "migrate", ["migrate", "--plan", plan.path, folder.url.path],
                ["migrating 300 of 300 files", "staging 601 of 601 files", "finishing 601 of 601 files"]
            ),
        ]
        for (command, arguments, lastCounts) in runs {
            let run = try await TerminalRun.run(arguments)
            #expect(run.code == 0, "\(command): \(run.terminal)")
            #expect(run.terminal.contains("\rfolio \(command): "), "\(command): \(run.terminal.debugDescription)")
            for count in lastCounts { #expect(run.terminal.contains("\rfolio \(command): \(count) (100%)"), "\(arguments): \(run.terminal.debugDescription)") }
            #expect(run.terminal.hasSuffix("\r\u{1B}[K"), "\(command) clears its line: \(run.terminal.suffix(80).debugDescription)")
            #expect(!run.output.contains("\r") && !run.output.contains("\u{1B}"), "\(command): nothing of it on stdout")
        }
        let verify = try await TerminalRun.run(["verify", folder.url.path])
        #expect(verify.terminal.contains(" of "), "\(verify.terminal.debugDescription)")
        let files = try #require(verify.terminal.components(separatedBy: "\rfolio verify: checking ").last?.split(separator: " ").first.flatMap { Int($0) })
        #expect(files >= 600, "the last count is the total")
    }

    @Test("with stderr not a terminal nothing is shown, and --json output is the same byte for byte as on a terminal")
    func quietOffATerminal() async throws {
        let folder = TemporaryFolder()
        try await storeOfAFewHundredFiles(in: folder)
        for arguments in [["verify", "--json", folder.url.path], ["recover", "--json", folder.url.path], ["verify", folder.url.path]] {
            let quiet = try await FolioTool.run(arguments)
            #expect(quiet.code == 0, "\(arguments): \(quiet.errors)")
            #expect(quiet.errors.isEmpty, "\(arguments): \(quiet.errors.debugDescription)")
            let terminal = try await TerminalRun.run(arguments)
            #expect(terminal.terminal.contains("\rfolio "), "\(arguments): the terminal run did show progress")
            #expect(Data(terminal.output.utf8) == Data(quiet.output.utf8), "\(arguments)")
        }
        let json = try FolioTool.json(try await FolioTool.run(["verify", "--json", folder.url.path]).output)
        #expect(json["healthy"] as? Bool == true)
    }

    @Test("drain: its count on a terminal, nothing off one")
    func drainProgress() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let onTerminal = TemporaryFolder(), offTerminal = TemporaryFolder()
        try await storeOfAFewHundredFiles(in: onTerminal)
        try await storeOfAFewHundredFiles(in: offTerminal)
        let drained = try await TerminalRun.run(["drain", "--server", server.baseURL.absoluteString, onTerminal.url.path])
        #expect(drained.code == 0, "\(drained.terminal)")
        #expect(drained.terminal.contains("\rdrained 300 of 300 (300 sent, 0 failed)"), "\(drained.terminal.debugDescription)")
        #expect(drained.output.contains("sent 300") && !drained.output.contains("\r"), "\(drained.output)")
        let quiet = try await FolioTool.run(["drain", "--server", server.baseURL.absoluteString, offTerminal.url.path])
        #expect(quiet.code == 0 && quiet.output.contains("sent 300"), "\(quiet.output)")
        #expect(!quiet.errors.contains("drained"), "\(quiet.errors)")
    }
}
