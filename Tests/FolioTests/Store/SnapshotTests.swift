@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// `Store.snapshot(to:)` and `folio snapshot` (FORMAT.md, "Copying the folder"): hard links of
/// every file but the journal (copied), so later writes to the store leave the snapshot as it was;
/// a copy instead across devices. Randomized from a seed; the expected content of each snapshot
/// is a model of what was committed before it (todos and their pending commands), not Folio's.
@Suite struct SnapshotTests {
    @Test func snapshotsFreezeTheStateAtTheirInstant() async throws {
        // FOLIO_SNAPSHOT_SEED replays a seed.
        let seed = ProcessInfo.processInfo.environment["FOLIO_SNAPSHOT_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder("source")
        let work = folder.url.deletingLastPathComponent()
        // A checkpoint only when asked: the journal holds the newest transactions at each snapshot.
        let store = try await Store.open(at: folder.url, configuration: .testing())
        var model: [UUID: String] = [:]
        var snapshots: [(url: URL, expected: [UUID: String])] = []
        for step in 0..<24 {
            let id =
                model.isEmpty || random.next() % 3 != 0 ? UUID() : model.keys.sorted { $0.uuidString < $1.uuidString }[Int(random.next() % UInt64(model.count))]
            let todo = Todo(id: id, title: "step \(step)", date: String(format: "2026-05-%02d", 1 + Int(random.next() % 4)))
            try await store.write { tx in try tx.upsert(todo) }
            model[id] = todo.title
            if random.next() % 4 == 0 { try await store.checkpoint() }
            if step % 6 == 5 {
                let url = work.appendingPathComponent("snapshot-\(step)")
                let report = try await store.snapshot(to: url)
                #expect(report.linked > 0 && report.copied >= 1, "seed \(seed): \(report)")
                snapshots.append((url, model))
            }
        }
        try await store.close()
        // The store's data files were replaced since; each snapshot still opens to its instant.
        for (url, expected) in snapshots {
            #expect(try await Store.verify(at: url).isHealthy, "seed \(seed): \(url.lastPathComponent)")
            let copy = try await Store.open(at: url, configuration: .testing())
            let todos = try await copy.fetch(Query<Todo>(.all))
            #expect(Dictionary(uniqueKeysWithValues: todos.map { ($0.id, $0.title) }) == expected, "seed \(seed): \(url.lastPathComponent)")
            // Every change waits with its command (push collection, coalescing: one per todo).
            let commanded = Set(try await copy.pendingCommands().compactMap { $0.entityID.flatMap(UUID.init(uuidString:)) })
            #expect(commanded == Set(expected.keys), "seed \(seed): \(url.lastPathComponent)")
            try await copy.close()
        }
        print("snapshots: \(snapshots.count) snapshots of 24 transactions, each equal to its instant (seed \(seed))")
    }

    @Test func aSnapshotOnAnotherDeviceIsCopied() async throws {
        let folder = TemporaryFolder("source")
        let other = TemporaryFolder("snapshot", onMemoryFileSystem: true)
        let device = { (url: URL) throws -> Int in
            try (FileManager.default.attributesOfFileSystem(forPath: url.path)[.systemNumber] as? NSNumber)?.intValue ?? -1
        }
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Todo(id: UUID(), title: "far", date: "2026-05-01")) }
        let report = try await store.snapshot(to: other.url)
        try await store.close()
        if try device(folder.url.deletingLastPathComponent()) != device(other.url.deletingLastPathComponent()) {
            #expect(report.linked == 0 && report.copied > 0, "\(report)")
        }
        let copy = try await Store.open(at: other.url, configuration: .testing())
        #expect(try await copy.fetch(Query<Todo>(.all)).map(\.title) == ["far"])
        try await copy.close()
    }

    @Test func theCommandLineToolSnapshotsAndRefusesAFolderThatIsNotEmpty() async throws {
        let folder = TemporaryFolder("source")
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(Todo(id: UUID(), title: "cli", date: "2026-05-02")) }
        try await store.close()
        let destination = folder.url.deletingLastPathComponent().appendingPathComponent("snap")
        let made = try await FolioTool.run(["snapshot", folder.url.path, destination.path])
        #expect(made.code == 0, "\(made.errors)")
        #expect(made.output.contains("files linked"), "\(made.output)")
        let day = "todos/2026-05/2026-05-02.json"
        let inode = { (url: URL) throws -> Int in
            try (FileManager.default.attributesOfItem(atPath: url.appendingPathComponent(day).path)[.systemFileNumber] as? NSNumber)?.intValue ?? -1
        }
        #expect(try inode(folder.url) == inode(destination))
        let again = try await FolioTool.run(["snapshot", folder.url.path, destination.path])
        #expect(again.code == 1 && again.errors.contains("not empty"), "\(again.errors)")
    }
}
