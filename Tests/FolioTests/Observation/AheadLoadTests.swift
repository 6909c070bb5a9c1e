@testable import Folio
import Foundation
import Testing

/// An observer never loads a file ahead of the journal records it read.
///
/// An observing store catches up with other processes' records without the lock first, and loads
/// the file of each partition a record touches, to tell inserted from updated. A file loaded then
/// may already hold records past the ones read: another process committed and checkpointed them
/// between this store's read of the journal and its read of the file. Those records then looked
/// like no change to the partition, and after the journal's reset the file looked like the one
/// already held: an entity that only they changed was never announced.
///
/// The interleaving is made, not waited for: the observer's read of the partition file pauses
/// (its I/O hook) until a second store of this process has committed a change to another entity
/// of that file and checkpointed it (or 2 s passed: an observer holding the readers' lock keeps
/// the writer out, which is the fix).
@Suite struct AheadLoadTests {
    /// A pause on one file's read, released by the test (bounded: 2 s).
    final class ReadPause: @unchecked Sendable {
        private let lock = NSLock()
        private var armed = false
        private var reached = false
        private let release = DispatchSemaphore(value: 0)
        let path: String

        init(path: String) { self.path = path }

        func arm() { lock.withLock { armed = true } }
        var wasReached: Bool { lock.withLock { reached } }
        func letGo() { release.signal() }

        var hook: IOHook {
            { step in
                guard case .read(let path) = step, path == self.path else { return }
                let pause = self.lock.withLock { () -> Bool in
                    guard self.armed else { return false }
                    self.armed = false
                    self.reached = true
                    return true
                }
                if pause { _ = self.release.wait(timeout: .now() + 2) }
            }
        }
    }

    @Test("an entity changed only by records a loaded file already held is announced")
    func recordsAFileHeldAreAnnounced() async throws {
        let folder = TemporaryFolder()
        let day = "2026-03-04"
        let path = "todos/2026-03/\(day).json"
        let first = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
        let second = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
        let writer = try await Store.open(at: folder.url, configuration: .testing())
        try await writer.write { tx in
            try tx.upsert(Todo(id: first, title: "first", date: day))
            try tx.upsert(Todo(id: second, title: "second", date: day))
        }
        try await writer.checkpoint()

        let pause = ReadPause(path: path)
        var configuration = Store.Configuration.testing()
        configuration.ioHook = pause.hook
        configuration.outsideChangePollInterval = .seconds(3600)
        let observer = try await Store.open(at: folder.url, configuration: configuration)
        let changes = Collector(await observer.changes())
        defer { changes.cancel() }

        // The observer reads a record of the first todo (its watcher or its read, whichever comes
        // first), and pauses loading its file.
        pause.arm()
        try await writer.write { tx in try tx.upsert(Todo(id: first, title: "first, changed", date: day)) }
        let reading = Task { try await observer.fetch(Query<Todo>(.day("2026-03-05"))) }
        for _ in 0..<400 where !pause.wasReached { try await Task.sleep(for: .milliseconds(5)) }
        #expect(pause.wasReached, "the observer never read the file (the watcher or the read did not catch up)")

        // Meanwhile the second todo changes, and a checkpoint writes it into that file (unless
        // the observer holds the readers' lock: then after it).
        let writing = Task {
            try await writer.write { tx in try tx.upsert(Todo(id: second, title: "second, changed", date: day)) }
            try await writer.checkpoint()
        }
        for _ in 0..<100 {
            if try await journalIsReset(folder) { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        pause.letGo()
        _ = try await reading.value
        try await writing.value

        let announced = await changes.wait(seconds: 10) { sets in
            sets.contains { set in set.updated.union(set.inserted).contains { $0.lowercased() == second.uuidString.lowercased() } }
        }
        if !announced {
            // A last read: a change found only now was still never announced by the watcher.
            _ = try await observer.fetch(Query<Todo>(.day(day)))
        }
        let told = changes.items.map { "\($0.origin): +\($0.inserted.sorted()) ~\($0.updated.sorted()) -\($0.deleted.sorted())" }
        #expect(announced, "the second todo's change was never announced; told: \(told)")
        #expect(try await observer.fetch(Query<Todo>(.day(day))).map(\.title).sorted() == ["first, changed", "second, changed"])
        try await observer.close()
        try await writer.close()
    }

    /// Whether the journal holds no record (a checkpoint reset it).
    private func journalIsReset(_ folder: TemporaryFolder) async throws -> Bool {
        let bytes = try Data(contentsOf: folder.file(".folio/journal"))
        return bytes.dropFirst(Journal.headerSize).allSatisfy { $0 == 0 }
    }
}
