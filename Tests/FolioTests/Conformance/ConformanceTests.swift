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
        server.changePageSize = 2 // so the feed check pages
        server.servesChangeFeed = withFeedAndToken
        server.requiredToken = withFeedAndToken ? "s3cret" : nil

        var options = ConformanceOptions(baseURL: server.baseURL, collections: [
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
}
