@testable import Folio
import FolioCrashSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One save at a time, at a chosen instant: the cases the editor race (EditorRaceTests) hits at
/// random. FORMAT.md, "Editing by hand".
@Suite struct StaleSaveTests {
    private let day = OneDay.path

    private func idsInFile(_ folder: TemporaryFolder) throws -> [String] {
        let file = try JSONSerialization.jsonObject(with: folder.bytes(day)) as? [String: Any]
        return (file?["entities"] as? [String: Any] ?? [:]).keys.sorted()
    }

    @Test func aSaveFromAnOlderBufferKeepsWhatFolioWroteSince() async throws {
        let folder = TemporaryFolder()
        let log = LogRecorder()
        let store = try await Store.open(at: folder.url, configuration: .testing(log: log.handler))
        try await store.write { tx in try tx.upsert(OneDay.slot("W-1")) }
        try await store.checkpoint()
        let buffer = try folder.text(day)   // the editor loads the file
        try await store.write { tx in try tx.upsert(OneDay.slot("W-2")) }
        try await store.write { tx in try tx.upsert(OneDay.slot("W-1", 1)) }
        try await store.checkpoint()   // Folio adds W-2 and changes W-1 meanwhile
        try OneDay.saveByRename(OneDay.adding("E", to: buffer), in: folder)
        #expect(try await OneDay.ids(store) == ["E", "W-1", "W-2"])
        #expect(try await store.get(Slot.self, id: "W-1")?.transaction == 1)
        try await store.checkpoint()
        #expect(try idsInFile(folder) == ["E", "W-1", "W-2"])
        #expect(log.messages.contains { $0.path == day && $0.text.contains("saved from an older version") })
        try await store.close()

        // A fresh process reads the merged file as it is.
        let again = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await OneDay.ids(again) == ["E", "W-1", "W-2"])
        try await again.close()
    }

    /// Folio removes a file whose last entity was deleted; an editor that loaded it before saves
    /// its buffer back with an entity added. The deleted entity stays deleted (the removal is
    /// Folio's newest version of the file), and the person's entity is added.
    @Test(arguments: [false, true]) func aSaveFromAnOlderBufferOfARemovedFileBringsNothingBack(storeClosed: Bool) async throws {
        let folder = TemporaryFolder()
        var store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(OneDay.slot("W-1")) }
        try await store.checkpoint()
        let buffer = try folder.text(day)   // the editor loads the file
        _ = try await store.write { tx in try tx.delete(Slot.self, id: "W-1") }
        try await store.checkpoint()
        #expect(!folder.exists(day), "an empty day keeps no file")
        if storeClosed { try await store.close() }
        try OneDay.saveByRename(OneDay.adding("E", to: buffer), in: folder)
        if storeClosed { store = try await Store.open(at: folder.url, configuration: .testing()) }
        #expect(try await OneDay.ids(store) == ["E"], "the deleted entity came back")
        try await store.close()
        let again = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await OneDay.ids(again) == ["E"])
        try await again.close()
    }

    /// The same with no Folio process running when the editor saves: the next open merges it.
    @Test func aSaveFromAnOlderBufferWhileNothingRunsIsMergedAtTheNextOpen() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in
            try tx.upsert(OneDay.slot("W-1")); try tx.upsert(OneDay.slot("W-3"))
        }
        try await store.checkpoint()
        let buffer = try folder.text(day)
        try await store.write { tx in
            try tx.upsert(OneDay.slot("W-2")); _ = try tx.delete(Slot.self, id: "W-3")
        }
        try await store.close()
        try OneDay.saveByRename(OneDay.adding("E", to: buffer), in: folder)

        let again = try await Store.open(at: folder.url, configuration: .testing())
        // W-2 (added since the buffer) is kept, W-3 (deleted since) stays deleted, E is added.
        #expect(try await OneDay.ids(again) == ["E", "W-1", "W-2"])
        try await again.close()
        #expect(try idsInFile(folder) == ["E", "W-1", "W-2"])
    }

    @Test func aSaveFromTheNewestVersionIsTakenAsItIs() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in
            try tx.upsert(OneDay.slot("W-1")); try tx.upsert(OneDay.slot("W-2"))
        }
        try await store.checkpoint()
        // The person deletes W-1 and adds E, from the file as it is now.
        let text = try folder.text(day)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var entities = try #require(object["entities"] as? [String: Any])
        entities["W-1"] = nil
        // A script that rewrites the JSON keeps the other top-level members (the revision).
        var rewritten = object
        rewritten["entities"] = entities
        let edited = OneDay.adding(
            "E",
            to: String(decoding: try JSONSerialization.data(withJSONObject: rewritten), as: UTF8.self)
                .replacingOccurrences(of: "\"entities\":{", with: "\"entities\": {"))
        try OneDay.saveByRename(edited, in: folder)
        #expect(try await OneDay.ids(store) == ["E", "W-2"])
        try await store.close()
        #expect(try idsInFile(folder) == ["E", "W-2"])
    }

    /// The window between Folio's last look at the file and its rename: a save landing there
    /// (here, from the test's I/O hook, when the checkpoint creates its temp file) is exchanged
    /// back into place and merged, never overwritten.
    @Test func aSaveDuringTheCheckpointIsNeverOverwritten() async throws {
        for inPlace in [false, true] {
            let folder = TemporaryFolder()
            let armed = Armed()
            let hook: IOHook = { step in
                guard case .create(let path) = step, path.hasPrefix(StoreLayout.tempFolder), armed.fire() else { return }
                let text = (try? folder.text(day)) ?? ""
                let saved = text.replacingOccurrences(of: "\"entities\": {", with: "\"entities\": {" + EditorRaceTests.entity("E") + ",")
                if inPlace {
                    try? Data(saved.utf8).write(to: folder.file(day))   // truncate and rewrite, same inode
                } else {
                    try? saved.write(to: folder.file("slots/2026-01/.edit"), atomically: false, encoding: .utf8)
                    _ = rename(folder.file("slots/2026-01/.edit").path, folder.file(day).path)
                }
            }
            let store = try await Store.open(at: folder.url, configuration: .testing(hook: hook))
            try await store.write { tx in try tx.upsert(OneDay.slot("W-1")) }
            try await store.checkpoint()
            try await store.write { tx in try tx.upsert(OneDay.slot("W-2")) }
            armed.arm()
            try await store.checkpoint()
            #expect(!armed.isArmed, "the save happened")
            #expect(try idsInFile(folder) == ["E", "W-1", "W-2"], "in place: \(inPlace)")
            #expect(try await OneDay.ids(store) == ["E", "W-1", "W-2"])
            try await store.close()
        }
    }
}

extension StaleSaveTests {
    /// A crash in the one system call where a person's save is not at its path (the swap back):
    /// the save is left in the file's versions folder, and the next checkpoint merges it.
    @Test func aCrashDuringTheSwapBackLosesNoSave() async throws {
        let folder = TemporaryFolder()
        let crash = SwapBackCrash()
        let hook: IOHook = { step throws(FolioError) in
            switch crash.step(step) {
            case .save:
                let text = (try? folder.text(day)) ?? ""
                let saved = text.replacingOccurrences(of: "\"entities\": {", with: "\"entities\": {" + EditorRaceTests.entity("E") + ",")
                try? saved.write(to: folder.file("slots/2026-01/.edit"), atomically: false, encoding: .utf8)
                _ = rename(folder.file("slots/2026-01/.edit").path, folder.file(day).path)
            case .crash:
                throw FolioError.system("injected crash: \(step)", path: "-", errno: EIO)
            case .pass:
                break
            }
        }
        let store = try await Store.open(at: folder.url, configuration: .testing(hook: hook))
        try await store.write { tx in try tx.upsert(OneDay.slot("W-1")) }
        try await store.checkpoint()
        try await store.write { tx in try tx.upsert(OneDay.slot("W-2")) }
        crash.arm()
        await #expect(throws: FolioError.self) { try await store.checkpoint() }
        #expect(crash.crashed, "the crash hit the swap back")
        try? await store.close()
        // Folio's content is in the file; the person's save waits in the versions folder.
        #expect(try idsInFile(folder) == ["W-1", "W-2"])

        let again = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await OneDay.ids(again) == ["E", "W-1", "W-2"])
        try await again.close()
        #expect(try idsInFile(folder) == ["E", "W-1", "W-2"])
    }
}

/// Saves a file when the checkpoint creates its swap temp file, lets the exchange pass, and
/// fails every step from the swap back on, as a crash would.
private final class SwapBackCrash: @unchecked Sendable {
    enum Action { case pass, save, crash }
    private let lock = NSLock()
    private var armed = false
    private var renames = 0
    private var temp: String?
    private(set) var crashed = false

    func arm() { lock.withLock { armed = true } }

    func step(_ step: IOStep) -> Action {
        lock.withLock {
            if crashed { return .crash }
            guard armed else { return .pass }
            switch step {
            // The checkpoint's temp file (wherever the store puts it), and the steps renaming it.
            case .create(let path)
            where temp == nil
                && (path.hasSuffix("-staged") || path.hasSuffix("-swap")
                    || path.hasPrefix(StoreLayout.tempFolder) && path.hasSuffix("-2026-01-25.json")):
                temp = path
                return .save
            // A staged temp file takes its swap name just before the exchange.
            case .rename(let from, let to) where from == temp && from.hasSuffix("-staged") && to.hasSuffix("-swap"):
                temp = to
                return .pass
            case .rename(let from, _) where from == temp:
                renames += 1
                if renames == 2 {
                    crashed = true
                    return .crash
                }
                return .pass
            default:
                return .pass
            }
        }
    }
}

/// Fires once after being armed.
private final class Armed: @unchecked Sendable {
    private let lock = NSLock()
    private var armed = false
    var isArmed: Bool { lock.withLock { armed } }
    func arm() { lock.withLock { armed = true } }
    func fire() -> Bool {
        lock.withLock {
            defer { armed = false }; return armed
        }
    }
}
