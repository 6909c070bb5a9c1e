@testable import Folio
import FolioCrashSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A copy of a folder (`cp -a` of a store no process is writing) keeps the versions Folio kept of
/// its files, so that a save from an older buffer is merged in the copy as in the original; but
/// never versions from another instant than the file (FORMAT.md, "Copying the folder").
@Suite struct CopiedVersionsTests {
    private let day = OneDay.path

    /// Three checkpoints of one day: three versions kept. Returns the file as the first left it.
    private func storeWithThreeVersions(in folder: TemporaryFolder) async throws -> String {
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(OneDay.slot("W-1")) }
        try await store.checkpoint()
        let first = try folder.text(day)
        try await store.write { tx in try tx.upsert(OneDay.slot("W-2")) }
        try await store.checkpoint()
        try await store.write { tx in try tx.upsert(OneDay.slot("W-3")) }
        try await store.close()
        return first
    }

    private func copy(_ folder: TemporaryFolder) throws -> TemporaryFolder {
        let copy = TemporaryFolder()
        try LiveCopyToolsTests.run("/bin/cp", ["-a", folder.url.path + "/.", copy.url.path])
        return copy
    }

    private func versions(_ folder: TemporaryFolder) throws -> [KeptVersions.Version] {
        try KeptVersions(fileSystem: FileSystem(root: folder.url.path)).versions(of: day)
    }

    @Test func aCopyKeepsTheVersionsASaveFromAnOlderBufferIsMergedAgainst() async throws {
        let folder = TemporaryFolder()
        let buffer = try await storeWithThreeVersions(in: folder)
        let kept = try versions(folder)
        #expect(kept.count == 3)
        let copy = try copy(folder)

        let opened = try await Store.open(at: copy.url, configuration: .testing())
        #expect(try await OneDay.ids(opened) == ["W-1", "W-2", "W-3"])
        #expect(try versions(copy).map(\.hash) == kept.map(\.hash), "the copy's first open dropped versions of a file that holds the newest")
        try await opened.close()

        // An editor saves, in the copy, a buffer it loaded before W-2 and W-3 were added.
        try OneDay.saveByRename(OneDay.adding("E", to: buffer), in: copy)
        let again = try await Store.open(at: copy.url, configuration: .testing())
        #expect(try await OneDay.ids(again) == ["E", "W-1", "W-2", "W-3"], "the save was not merged against the version it started from")
        try await again.close()
    }

    @Test func aCopysVersionsFromAnotherInstantAreDropped() async throws {
        let folder = TemporaryFolder()
        _ = try await storeWithThreeVersions(in: folder)
        let copy = try copy(folder)
        // As if the versions folder were copied after a later checkpoint kept a newer version
        // (one with a todo the file does not hold): the file is older than its newest version.
        let current = try copy.text(day)
        let newer = Array(OneDay.adding("LATER", to: current).utf8)
        let order = (try versions(copy).last?.order ?? 0) + 1
        let digits = String(order)
        let name = String(repeating: "0", count: 20 - digits.count) + digits + "-\(ContentHash(newer)).json"
        try copy.write(String(decoding: newer, as: UTF8.self), to: KeptVersions.folder(of: day) + "/" + name)

        let log = LogRecorder()
        let opened = try await Store.open(at: copy.url, configuration: .testing(log: log.handler))
        #expect(try await OneDay.ids(opened) == ["W-1", "W-2", "W-3"])
        #expect(try versions(copy).map(\.hash) == [ContentHash(Array(current.utf8))], "versions of another instant than the file were kept")
        #expect(!log.messages.contains { $0.path == day && $0.text.contains("older version") }, "\(log.messages.map(\.text))")
        try await opened.close()
        #expect(try copy.text(day) == current)
    }

    /// A copy of a store that never queued a command (pull-only data) becomes a store of its own
    /// that verifies clean: no `sent.json` saying `0`, which reads as damaged (a mark names a
    /// command; a missing one says nothing was sent).
    @Test func aCopyOfAStoreWithoutCommandsVerifiesClean() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        try await store.write { tx in try tx.upsert(DailyStat(date: "2025-05-01", completed: 3, tagStats: [])) }
        try await store.close()
        let copy = try copy(folder)
        let opened = try await Store.open(at: copy.url, configuration: .testing())
        #expect(try await opened.get(DailyStat.self, id: "2025-05-01")?.completed == 3)
        try await opened.close()
        let report = try await Store.verify(at: copy.url)
        #expect(report.problems.isEmpty, "\(report.problems.map { "\($0.path): \($0.message)" })")
    }
}
