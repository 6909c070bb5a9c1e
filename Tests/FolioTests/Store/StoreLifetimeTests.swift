@testable import Folio
import Foundation
import Testing

/// A store an app releases without `close()` goes, and its open files with it (the journal, the
/// lock, the outbox's entity index: `Journal` and `FileLock` close theirs when they go), while
/// every change it acknowledged stays in the journal for the next open. Its idle checkpoint used
/// to hold it while it waited for the delay (an hour in these tests), so a test suite that left
/// stores open held thousands of descriptors.
@Suite struct StoreLifetimeTests {
    @Test func aStoreReleasedWithoutCloseGoesAndKeepsItsWrites() async throws {
        let folder = TemporaryFolder()
        var store: Store? = try await Store.open(at: folder.url, configuration: .testing())
        let written = todo("kept", on: "2026-11-29")
        try await store?.write { tx in try tx.upsert(written) }   // starts the idle checkpoint's wait
        weak let released = store
        store = nil
        let deadline = ContinuousClock.now + .seconds(5)
        while released != nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(released == nil, "the store was still held after it was released (its idle checkpoint waits an hour)")

        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.get(Todo.self, id: written.id)?.title == "kept")
        try await reopened.close()
    }
}
