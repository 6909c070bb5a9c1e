@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// Command files are written in place at a checkpoint (no temp file, no rename) and made durable
/// by the checkpoint's barrier; until the journal is reset, its records hold every byte of them
/// (FORMAT.md, "The outbox"). So a checkpoint cut short (a crash, a power cut) may leave command
/// files empty or torn, and every reader must take the journal's copy instead of quarantining
/// them, and the next checkpoint must write them again.
///
/// Randomized from a seed: transactions of 1–3 new todos, a checkpoint stopped at a random
/// command file write, then random command files of that checkpoint cut at random lengths (what
/// a power cut leaves of unsynced writes). The expected queue comes from FORMAT.md: one upsert per
/// new entity, numbered in the order the transactions touched them.
@Suite struct CutShortCommandFileTests {
    struct Stop: Error {}

    @Test func aCheckpointCutShortLeavesCommandFilesThatReadersTakeFromTheJournal() async throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        var rounds = 0
        var cut = 0
        for _ in 0..<4 {
            rounds += 1
            cut += try await round(&random, seed: seed)
        }
        print("cut-short command files: \(rounds) rounds, \(cut) files cut short (seed \(seed))")
    }

    /// One store: returns how many command files were left cut short.
    private func round(_ random: inout SplitMix64, seed: UInt64) async throws -> Int {
        let folder = TemporaryFolder()
        let writes = Counter()
        let hook: IOHook = { step throws(FolioError) in
            guard case .write(let path) = step, path.hasPrefix("outbox/") else { return }
            if writes.increment() { throw FolioError(.io, "power cut (test)", path: path) }
        }
        var expected: [String] = []
        let store = try await Store.open(at: folder.url, configuration: .testing(hook: hook))
        for index in 0..<(4 + Int(random.next() % 8)) {
            let todos = (0..<(1 + Int(random.next() % 3))).map { todo("Task \(index).\($0)", on: "2026-11-\(10 + Int(random.next() % 5))") }
            try await store.write { tx in for item in todos { try tx.upsert(item) } }
            expected += todos.map(\.id.uuidString)
        }
        writes.stop(at: 1 + Int(random.next() % UInt64(expected.count)))
        await #expect(throws: FolioError.self) { try await store.checkpoint() }
        // The process dies here: the journal still holds every transaction.
        try await store.close()

        // What a power cut leaves of the command files written since the last sync.
        let outbox = folder.file("outbox")
        let names = try FileManager.default.contentsOfDirectory(atPath: outbox.path).filter { $0.hasSuffix(".json") }.sorted()
        var cutShort = 0
        for name in names {
            let path = outbox.appendingPathComponent(name).path
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            if bytes.isEmpty {
                cutShort += 1
            } else if random.next() % 2 == 0 {
                let length = Int(random.next() % UInt64(bytes.count))
                try bytes.prefix(length).write(to: URL(fileURLWithPath: path))
                cutShort += 1
            }
        }
        #expect(cutShort > 0, "the stopped write leaves an empty file (seed \(seed))")

        // `folio verify`: notes, not errors.
        let report = try await Store.verify(at: folder.url)
        let errors = report.problems.filter { $0.severity == .error }
        #expect(errors.isEmpty, "verify calls a cut-short command file damage: \(errors) (seed \(seed))")
        #expect(report.problems.contains { $0.message.contains("cut short") }, "verify notes the cut-short files (seed \(seed))")

        // Another process reading (read-only: it neither checkpoints nor writes anything).
        var readOnly = Store.Configuration.testing()
        readOnly.readOnly = true
        let reader = try await Store.open(at: folder.url, configuration: readOnly)
        #expect(try await reader.pendingCommands().compactMap(\.entityID) == expected, "seed \(seed)")
        #expect(try await reader.quarantinedCommands().isEmpty, "seed \(seed)")
        try await reader.close()

        // The next open checkpoints: every command file whole again, none quarantined.
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.pendingCommands().compactMap(\.entityID) == expected, "seed \(seed)")
        #expect(try await reopened.quarantinedCommands().isEmpty, "seed \(seed)")
        try await reopened.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: outbox.path) where name.hasSuffix(".json") {
            let bytes = try [UInt8](Data(contentsOf: outbox.appendingPathComponent(name)))
            let command = try OutboxCommand(json: JSONParser.parse(bytes), path: "outbox/" + name)
            #expect(CommandFileName.name(command.sequence) == name, "seed \(seed)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("outbox/quarantine").path), "seed \(seed)")
        let warnings = try await Store.verify(at: folder.url).problems.filter { $0.severity >= .warning }
        #expect(warnings.isEmpty, "\(warnings) seed \(seed)")
        return cutShort
    }

    /// Counts command file writes once told where to stop; true for the one to fail.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        private var limit: Int?
        func stop(at limit: Int) { lock.withLock { self.limit = limit } }
        func increment() -> Bool {
            lock.withLock {
                guard let limit else { return false }
                value += 1
                return value == limit
            }
        }
    }
}
