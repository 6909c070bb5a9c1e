@testable import Folio
import Foundation
import Testing

/// A full disk: committed writes stay committed and readable, new ones fail cleanly, and nothing
/// reports a committed write as failed.
@Suite struct FullDiskTests {
    static func tag(_ number: Int, name: String? = nil) -> Tag {
        Tag(id: "tag-\(number)", name: name ?? "Tag \(number)", color: "#000000")
    }

    #if os(Linux)
    @Test func onARealFullDiskCommittedWritesSurviveAndNewOnesFailCleanly() async throws {
        // A tmpfs of 2 MiB (needs root, as CI runs; the failure says why if it cannot mount).
        let disk = try SmallDisk(megabytes: 2)
        let url = disk.url.appendingPathComponent("store")
        let log = LogRecorder()
        /// Runs one step of the scenario; an error it throws is recorded with the step's name and
        /// what the store logged, then ends the test.
        func step<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
            do { return try await body() } catch {
                Issue.record("\(name) threw: \(error); the store logged: \(log.messages.map { "\($0.level) \($0.text) [\($0.path ?? "")]" })")
                throw error
            }
        }
        var store = try await step("the first open") { try await Store.open(at: url, configuration: .testing(log: log.handler)) }
        try await step("the first writes") {
            try await store.write { tx in for number in 1...5 { try tx.upsert(Self.tag(number)) } }
            try await store.checkpoint()
            try await store.write { tx in try tx.upsert(Self.tag(6)) }
        }
        try disk.fill()

        // The checkpoint at close cannot write tags.json: the commit stands, close does not throw.
        try await step("the close on the full disk") { try await store.close() }
        #expect(log.messages.contains { $0.level == .error && $0.text.contains("checkpoint at close failed") })

        // Opening on the full disk works and serves everything committed, from the journal.
        store = try await step("the open on the full disk") { try await Store.open(at: url, configuration: .testing(log: log.handler)) }
        #expect(try await step("a read on the full disk") { try await store.fetch(Query<Tag>()) }.map(\.id).sorted() == (1...6).map { "tag-\($0)" }.sorted())
        // A new commit fails cleanly, and changes nothing.
        let big = String(repeating: "x", count: 64 << 10)
        await expectFolioError(.diskFull) { try await store.write { tx in try tx.upsert(Self.tag(7, name: big)) } }
        #expect(try await step("the read after the failed commit") { try await store.fetch(Query<Tag>()) }.count == 6)
        try await step("the second close on the full disk") { try await store.close() }

        try disk.free()
        store = try await step("the open with space again") { try await Store.open(at: url, configuration: .testing()) }
        try await step("the write with space again") { try await store.write { tx in try tx.upsert(Self.tag(7, name: big)) } }
        try await store.close()
        #expect(try String(contentsOf: url.appendingPathComponent("tags.json"), encoding: .utf8).contains("\"tag-6\""))
        let report = try await Store.verify(at: url)
        #expect(report.isHealthy, "\(report.problems.map(\.description))")
    }
    #endif

    @Test func aCheckpointThatFailsAfterACommitDoesNotFailTheWrite() async throws {
        let folder = TemporaryFolder()
        let log = LogRecorder()
        let full = FaultSwitch()
        var configuration = Store.Configuration.testing(
            hook: { step throws(FolioError) in
                if case .rename = step, full.isOn { throw FolioError.system("rename", path: "-", errno: ENOSPC) }
            }, log: log.handler)
        configuration.checkpointThreshold = 1   // every commit is followed by a checkpoint
        var store = try await Store.open(at: folder.url, configuration: configuration)
        full.isOn = true
        try await store.write { tx in try tx.upsert(Self.tag(1)) }
        #expect(try await store.get(Tag.self, id: "tag-1") != nil)
        try await store.close()
        #expect(log.messages.contains { $0.level == .error && $0.text.contains("the commit stands") })
        store = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await store.get(Tag.self, id: "tag-1") != nil)
        try await store.close()
    }
}

/// A flag tests flip while a store runs (its I/O hook reads it).
final class FaultSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isOn: Bool {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
