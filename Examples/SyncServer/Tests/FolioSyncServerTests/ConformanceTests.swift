import FolioConformance
@testable import FolioSyncServer
import Foundation
import Testing

/// PROTOCOL.md's conformance suite (the root package's FolioConformance) against this server,
/// in-process; `.ci/run` runs the same suite against the built executable.
@Suite struct ConformanceTests {
    /// The options that describe this server: todos by day, tags unpartitioned (any id), the
    /// computed dailyStats, a feed, and a token when given.
    static func options(_ server: SyncServer, token: String?) -> ConformanceOptions {
        var options = ConformanceOptions(
            baseURL: server.baseURL,
            collections: [
                .init(
                    name: "todos", partition: "2026-11-22",
                    sample: #"""
                        {"id":"$ID","title":"Buy milk","date":"2026-11-22","done":false,"priority":1,"createdAt":"2026-11-22T09:00:00Z","updatedAt":"2026-11-22T09:00:00Z"}
                        """#),
                .init(name: "tags", partition: "", sample: ##"{"id":"$ID","name":"Home","color":"#33AA55"}"##, acceptsAnyID: true),
            ])
        options.serverComputed = [.init(name: "dailyStats", partition: "2026-11")]
        options.token = token
        options.seed = UInt64.random(in: 1...1_000_000)
        options.timeout = 10
        return options
    }

    @Test(arguments: [nil, "s3cret"] as [String?])
    func theReferenceServerPassesEveryCheck(token: String?) async throws {
        try await check(.folder, token: token)
    }

    @Test(.enabled(if: TestPostgres.runs, TestPostgres.notRunReason), arguments: [nil, "s3cret"] as [String?])
    func onPostgreSQLTooItPassesEveryCheck(token: String?) async throws {
        try await check(.postgres, token: token)
    }

    private func check(_ storage: TestStorage, token: String?) async throws {
        let harness = try await Harness.start(on: storage) {
            $0.token = token
            $0.changesPageSize = 3   // so the feed check pages
        }
        let options = Self.options(harness.server, token: token)
        // The suite blocks on sockets: run it off the cooperative pool the server needs.
        let summary = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: ConformanceSuite.run(options)) }
        }
        print("conformance against the reference server (\(storage.rawValue), token: \(token != nil)): \(summary)")
        for failure in summary.failed { Issue.record("\(failure) (seed \(options.seed))") }
        #expect(summary.skipped == (token == nil ? 2 : 0))
        try await harness.stop()
    }
}
