@testable import Folio
import Foundation
import Testing

/// The barrier alone: what each kind syncs, counted from the file system's recorded steps.
@Suite struct DurabilityBarrierTests {
    static func syncs(_ steps: [IOStep]) -> [IOStep] {
        steps.filter {
            switch $0 {
            case .sync, .syncFileSystem: true
            default: false
            }
        }
    }

    /// Writes `files` new files in two new folders through a barrier, then flushes it.
    static func run(_ kind: DurabilityBarrier.Kind, files: Int) throws -> [IOStep] {
        let folder = TemporaryFolder()
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let steps = IORecorder()
        let fileSystem = FileSystem(root: folder.url.path, hook: steps.hook)
        let barrier = DurabilityBarrier(fileSystem: fileSystem, kind: kind)
        for index in 0..<files {
            let parent = index % 2 == 0 ? "a/b" : "c"
            try barrier.makeDirectory(parent)
            try fileSystem.writeInPlace(parent + "/\(index).json", Array("{}\n".utf8), sync: barrier.fileSync)
            barrier.noteFolder(parent)
        }
        try barrier.flush()
        return steps.steps
    }

    @Test func aFileSystemBarrierIsOneSyncWhateverIsWritten() throws {
        try #require(Platform.canSyncFileSystem, "this test needs syncfs (Linux)")
        #expect(Self.syncs(try Self.run(.fileSystem, files: 40)) == [.syncFileSystem])
    }

    @Test func withoutSyncfsEachFileAndEachFolderIsSynced() throws {
        let synced = Self.syncs(try Self.run(.perFile, files: 40)).map(\.description)
        let files = synced.filter { $0.hasSuffix(".json") }
        #expect(files.count == 40)
        // The two folders and the parents of the three new ones ("", "a", ""), once each.
        #expect(synced.filter { !$0.hasSuffix(".json") }.sorted() == ["sync .", "sync a", "sync a/b", "sync c"])
    }
}
