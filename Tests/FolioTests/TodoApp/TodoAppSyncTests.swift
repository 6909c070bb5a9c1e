import FolioTestServer
import Foundation
import Testing

/// `todo sync` against the test server of PROTOCOL.md on 127.0.0.1: the outbox goes out in order,
/// the server's state comes back, and a sync SIGKILLed mid-run and run again applies every change
/// exactly once and leaves the server equal to the client.
@Suite struct TodoAppSyncTests {
    @Test func syncPushesEverythingInOrderThenPulls() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let app = TodoCLI()
        let url = server.baseURL.absoluteString

        try await app.ok("tag", "add", "errands")
        let a = try await app.add("A", "--date", "2031-07-01", "--tag", "errands")
        let b = try await app.add("B", "--date", "2031-07-01")
        try await app.ok("done", a)
        try await app.ok("move", b, "2031-07-02")
        try await app.ok("tag", "rename", "errands", "shopping")
        let queued = try app.outbox()
        #expect(queued.count >= 4)
        // No server at that address: nothing is lost, everything waits.
        let offline = try await app.run("sync", "--server", "http://127.0.0.1:1/api/")
        #expect(offline.status == 1 && offline.errors.contains("\(queued.count) still wait in the outbox"), "\(offline.errors)")
        #expect(try app.outbox() == queued)

        // The server wants a token: without it nothing goes, and nothing is lost.
        server.requiredToken = "s3cret"
        let refused = try await app.run("sync", "--server", url, "--attempts", "1")
        #expect(refused.status == 1 && server.appliedLog.isEmpty, "\(refused.errors)")
        #expect(try app.outbox() == queued)

        let synced = try await app.run("sync", "--server", url, "--token", "s3cret")
        #expect(synced.status == 0, "\(synced.errors)")
        #expect(synced.output.hasPrefix("sent \(queued.count) changes;"), "\(synced.output)")
        #expect(try app.outbox().isEmpty)
        // Every command once, in the outbox's order.
        #expect(server.appliedLog.compactMap { $0.key.flatMap(SyncConvergenceTests.sequence(ofKey:)) } == queued)
        #expect(server.maxAppliedCountPerKey == 1)
        #expect(NSDictionary(dictionary: try await app.export().object) == NSDictionary(dictionary: try server.todoExport()))
        #expect(try await app.ok("list", "2031-07-01").allSatisfy { !$0.contains("(pending)") })

        // The server's DailyStat replaces the local one (the test server does not compute stats:
        // write one as the real server would), and another device's todo arrives.
        let errands = try #require(try await app.export().tags.first?["id"] as? String)
        let stat = """
            {"id": "2031-07-01", "date": "2031-07-01", "total": 9, "completed": 7,
             "tagStats": [{"id": "2031-07-01:\(errands)", "tagID": "\(errands)", "count": 5}]}
            """
        server.edit("dailyStats", "2031-07-01", json: Data(stat.utf8), partition: "2031-07")
        let other = UUID().uuidString
        let todo = """
            {"id": "\(other)", "title": "From the phone", "date": "2031-07-03", "done": false, "priority": 1,
             "createdAt": "2031-07-01T08:00:00.000Z", "updatedAt": "2031-07-01T08:00:00.000Z"}
            """
        server.edit("todos", other, json: Data(todo.utf8), partition: "2031-07-03")
        try await app.ok("sync", "--server", url, "--token", "s3cret")
        #expect(summary(try app.stats("2031-07")["2031-07-01"]) == "7/9 \(errands):5")
        #expect(try await app.ok("stats", "2031-07").contains("  2031-07-01  7/9 done  #shopping 5"))
        #expect(try await app.ok("list", "2031-07-03") == ["2031-07-03: 1 todo, 0 done", "  [ ] \(other.prefix(8))  From the phone  !1"])
        #expect(NSDictionary(dictionary: try await app.export().object) == NSDictionary(dictionary: try server.todoExport()))
    }

    @Test func aSyncKilledMidRunResumesAndConverges() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let app = TodoCLI()
        let url = server.baseURL.absoluteString
        try await app.ok("tag", "add", "home")
        for index in 0..<9 {
            _ = try await app.add("todo \(index)", "--date", "2031-08-0\(index + 1)", "--tag", "home")
        }
        let queued = try app.outbox()
        #expect(queued.count == 10)

        // Every push waits a moment on the server, so the kills land mid-sync: between
        // acknowledgements, and while a request is in flight (its answer is then lost).
        server.inject(.delay(seconds: 0.2), times: 1000)
        for applied in [2, 6] {
            let child = try app.start(["sync", "--server", url])
            let deadline = ContinuousClock.now + .seconds(60)
            while server.appliedLog.count < applied, child.process.isRunning, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            // A sync that applied this much and ended before the kill (a loaded machine noticed
            // late) is a missed kill, not a failure; one that ended before applying it is.
            #expect(child.process.isRunning || server.appliedLog.count >= applied, "the sync ended before the kill: \(child.errorText)")
            child.kill()
        }
        server.removeAllFaults()
        let resumed = try await app.run("sync", "--server", url)
        #expect(resumed.status == 0, "\(resumed.errors)")

        #expect(try app.outbox().isEmpty)
        #expect(server.maxAppliedCountPerKey == 1)
        let applied = server.appliedLog.compactMap { $0.key.flatMap(SyncConvergenceTests.sequence(ofKey:)) }
        #expect(applied == queued, "each command applied once, in order")
        #expect(NSDictionary(dictionary: try await app.export().object) == NSDictionary(dictionary: try server.todoExport()))
        #expect(try await app.export().todos.count == 9)
    }

    /// On Linux `todo sync` runs its sync in a child process (IsolatedSync). A person who kills the
    /// tool (kill -9, a closed terminal) stops the sync: the child ends with its parent instead of
    /// syncing on beside the tool's next run, where it raced the next sync and the person's next
    /// changes.
    @Test func killingTheSyncToolEndsItsSyncChild() async throws {
        #if canImport(FoundationNetworking)
        let server = try TestServer()
        defer { server.stop() }
        let app = TodoCLI()
        _ = try await app.add("Buy milk", "--date", "2031-08-01")
        // The push hangs on the server (past the 30 s request timeout, then again on each retry),
        // so the sync is still running when the test looks for its child. A sync that ended
        // before the test could look (a starved test task on a loaded machine) proves nothing
        // either way: the scenario runs again, at most three times, and each such end is shown.
        server.inject(.delay(seconds: 600), times: 100)
        var unobserved: [String] = []
        for _ in 0..<3 {
            let parent = try app.start(["sync", "--server", server.baseURL.absoluteString, "--attempts", "100"])
            // Watched and killed from a thread of its own: a test task starved by other suites on
            // a loaded machine (30 s and more in a full run) looked only after the push timed out.
            let watch = KillWatch(parent: parent.process.processIdentifier, requestsBefore: server.requestCount) { server.requestCount }
            let outcome = await watch.result(within: .seconds(90))
            guard let outcome else {
                parent.kill()
                let printed = (try? String(contentsOf: parent.output, encoding: .utf8)) ?? ""
                unobserved.append(
                    "the sync ended with status \(parent.process.isRunning ? -1 : parent.process.terminationStatus) before a request and its child were seen: "
                        + "\(parent.errorText) \(printed)")
                continue
            }
            #expect(!outcome.childRanOn, "the sync child \(outcome.child) still runs 5 s after its parent was killed")
            return
        }
        Issue.record("the sync was never seen running with its child: \(unobserved.joined(separator: "\n"))")
        #endif
    }

    /// Watches a `todo sync` from a thread: once the server has a request of it and it has one
    /// child, kills it (SIGKILL) and watches the child for 5 s.
    final class KillWatch: @unchecked Sendable {
        struct Outcome {
            let child: Int32
            let childRanOn: Bool
        }
        private let lock = NSLock()
        private var outcome: Outcome?
        private var finished = false

        init(parent: Int32, requestsBefore: Int, requests: @escaping @Sendable () -> Int) {
            Thread.detachNewThread { [self] in
                var found: Outcome?
                let deadline = Date().addingTimeInterval(90)
                while Date() < deadline, TodoAppSyncTests.isRunning(parent) {
                    let children = TodoAppSyncTests.children(of: parent)
                    if requests() > requestsBefore, children.count == 1 {
                        kill(parent, SIGKILL)
                        let gone = Date().addingTimeInterval(5)
                        while TodoAppSyncTests.isRunning(children[0]), Date() < gone { usleep(20_000) }
                        let ranOn = TodoAppSyncTests.isRunning(children[0])
                        if ranOn { kill(children[0], SIGKILL) }
                        found = Outcome(child: children[0], childRanOn: ranOn)
                        break
                    }
                    usleep(10_000)
                }
                lock.withLock { (outcome, finished) = (found, true) }
            }
        }

        /// What the thread found (nil: the sync ended, or the time ran out, before it was seen).
        func result(within limit: Duration) async -> Outcome? {
            let deadline = ContinuousClock.now + limit + .seconds(10)
            while !lock.withLock({ finished }), ContinuousClock.now < deadline {
                do { try await Task.sleep(for: .milliseconds(50)) } catch { break }
            }
            return lock.withLock { outcome }
        }
    }

    /// The processes whose parent is `pid` (from /proc).
    static func children(of pid: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { candidate in
            guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && Int32(fields[1]) == pid
        }
    }

    /// Whether a process exists and is not a zombie waiting to be reaped.
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }
}
