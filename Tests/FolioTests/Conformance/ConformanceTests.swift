import FolioConformance
import FolioTestServer
import Foundation
import Testing

/// PROTOCOL.md's conformance suite (Tests/Conformance) against the dependency-free test server,
/// in-process on 127.0.0.1; `.ci/run` runs the same suite against the reference server.
@Suite struct ConformanceTests {
    /// A server with a feed and a token, and one with neither (the feed must then be 501).
    @Test(arguments: [true, false])
    func theTestServerPassesEveryCheck(withFeedAndToken: Bool) throws {
        let server = try TestServer()
        defer { server.stop() }
        server.servedCollections = ["todos", "tags"]
        server.serverComputedCollections = ["dailyStats"]
        server.edit("dailyStats", "2026-11-22", json: Data(#"{"id":"2026-11-22","total":1}"#.utf8), partition: "2026-11")
        server.changePageSize = 2   // so the feed check pages
        server.servesChangeFeed = withFeedAndToken
        server.requiredToken = withFeedAndToken ? "s3cret" : nil

        var options = ConformanceOptions(
            baseURL: server.baseURL,
            collections: [
                .init(name: "todos", partition: "2026-11-22", sample: #"{"id":"$ID","title":"Buy milk","done":false}"#),
                .init(name: "tags", partition: "", sample: #"{"id":"$ID","name":"Home"}"#, acceptsAnyID: true),
            ])
        options.serverComputed = [.init(name: "dailyStats", partition: "2026-11")]
        options.token = server.requiredToken
        options.hasChangeFeed = withFeedAndToken
        options.seed = UInt64.random(in: 1...1_000_000)
        options.timeout = 5

        let summary = ConformanceSuite.run(options)
        print("conformance against the test server (feed and token: \(withFeedAndToken)): \(summary)")
        for failure in summary.failed { Issue.record("\(failure) (seed \(options.seed))") }
        #expect(summary.results.count == ConformanceSuite.checkNames.count)
        #expect(summary.skipped == 0 || !withFeedAndToken, "with a token and a feed every check runs")
        // Each key applied at most once, whatever the suite sent twice.
        #expect(server.maxAppliedCountPerKey <= 1)
    }

    /// A server that breaks one rule, and the check that must catch it: the suite is not vacuous.
    enum Breakage: String, CaseIterable, Sendable {
        case conflictIs409, servesEveryCollection, noFeedButTheOptionsSayFeed, replaysAreAppliedAgain

        var check: String {
            switch self {
            case .conflictIs409: "stale-if-match"
            case .servesEveryCollection: "unserved-collection"
            case .noFeedButTheOptionsSayFeed: "feed"
            case .replaysAreAppliedAgain: "replay"
            }
        }
    }

    @Test(arguments: Breakage.allCases)
    func theSuiteCatchesAServerThatBreaksARule(_ breakage: Breakage) throws {
        let server = try TestServer()
        defer { server.stop() }
        server.servedCollections = ["todos"]
        switch breakage {
        case .conflictIs409:
            // Every PUT with If-Match whose version is not the stored one answers 409.
            server.inject(.status(409), times: 1_000) { [server] request in
                guard request.method == "PUT", let ifMatch = request.header("If-Match"), let id = request.id else { return false }
                return server.entity("todos", id).map { "\"\($0.version)\"" != ifMatch } ?? false
            }
        case .servesEveryCollection: server.servedCollections = nil
        case .noFeedButTheOptionsSayFeed: server.servesChangeFeed = false
        case .replaysAreAppliedAgain:
            // The server forgets every key as soon as it answers.
            server.inject(.delay(seconds: 0), times: 10_000, on: .all) { [server] _ in
                server.forgetIdempotencyKeys()
                return false
            }
        }
        var options = ConformanceOptions(
            baseURL: server.baseURL,
            collections: [
                .init(name: "todos", partition: "2026-11-22", sample: #"{"id":"$ID","title":"Buy milk","done":false}"#, acceptsAnyID: true)
            ])
        options.seed = UInt64.random(in: 1...1_000_000)
        options.timeout = 5
        let summary = ConformanceSuite.run(options)
        let failed = summary.failed.map(\.name)
        print("conformance against a test server that breaks \(breakage.rawValue): \(summary); failed: \(failed.joined(separator: ", "))")
        #expect(failed.contains(breakage.check), "seed \(options.seed)")
    }
}
