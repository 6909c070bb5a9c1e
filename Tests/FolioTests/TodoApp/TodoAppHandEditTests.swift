import FolioTestServer
import FolioCrashSupport
import Foundation
import Testing

/// A todo edited by hand with python, as a user would, then seen by the todo app's short-lived
/// processes: the edit becomes one command (also with two processes reading it at once, and when
/// the adopting process is SIGKILLed at a random instant), the day's stats are recomputed, the
/// push reaches the server and the next pull keeps it.
@Suite struct TodoAppHandEditTests {
    /// The pending commands of `outbox/`, parsed, in order.
    static func commands(_ app: TodoCLI) throws -> [[String: Any]] {
        try app.outbox().map { sequence in
            let name = String(format: "%020llu.json", sequence)
            return try JSONSerialization.jsonObject(with: app.folder.bytes("outbox/\(name)")) as? [String: Any] ?? [:]
        }
    }

    @Test func aHandEditIsSentOnceUpdatesTheStatsAndSurvivesThePull() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let app = TodoCLI()
        let url = server.baseURL.absoluteString
        let id = try await app.add("Walk", "--date", "2031-07-01")
        _ = try await app.add("Read", "--date", "2031-07-01")
        #expect(summary(try app.stats("2031-07")["2031-07-01"]) == "0/2")
        try await app.ok("sync", "--server", url)
        #expect(try app.outbox().isEmpty)
        let version = try #require(server.entity("todos", id)?.version)

        try HandEditSyncTests.editByHand(app.folder.file("todos/2031-07/2031-07-01.json"), id: id, field: "done", json: "true")
        // Two processes read the edit at once: one command between them.
        let first = try app.start(["list", "2031-07-01"]), second = try app.start(["list", "2031-07-01"])
        #expect(await first.waitForExit(before: .now + .seconds(60)) && first.process.terminationStatus == 0, "\(first.errorText)")
        #expect(await second.waitForExit(before: .now + .seconds(60)) && second.process.terminationStatus == 0, "\(second.errorText)")
        try await app.ok("list", "2031-07-01")
        let commands = try Self.commands(app)
        #expect(commands.count == 1, "\(commands)")
        #expect(commands.first?["operation"] as? String == "upsert")
        #expect(commands.first?["baseVersion"] as? String == version)
        #expect((commands.first?["base"] as? [String: Any])?["done"] as? Bool == false)
        #expect((commands.first?["entity"] as? [String: Any])?["done"] as? Bool == true)
        // The app's hook recomputed the day's stat in the adopting transaction.
        #expect(summary(try app.stats("2031-07")["2031-07-01"]) == "1/2")

        try await app.ok("sync", "--server", url)
        #expect(try app.outbox().isEmpty)
        let onServer = try JSONSerialization.jsonObject(with: try #require(server.entity("todos", id)?.json)) as? [String: Any]
        #expect(onServer?["done"] as? Bool == true)
        try await app.ok("sync", "--server", url)
        #expect(try await app.export().todo(id)?["done"] as? Bool == true)
        print("todo hand edit: 1 command from 2 processes, base version \(version), stats 1/2, pushed and kept after the pull")
    }

    @Test func aKilledAdoptionKeepsContentAndCommandTogether() async throws {
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let server = try TestServer()
        defer { server.stop() }
        let app = TodoCLI()
        let id = try await app.add("Walk", "--date", "2031-07-01")
        try await app.ok("sync", "--server", server.baseURL.absoluteString)
        let version = try #require(server.entity("todos", id)?.version)
        let file = app.folder.file("todos/2031-07/2031-07-01.json")
        // Kills land anywhere in a run: the delay is drawn up to about the length of a run, as the
        // last run that ended on its own measured it.
        let began = ContinuousClock.now
        try await app.ok("list", "2031-07-01")
        var window = max(5, Int((ContinuousClock.now - began) / .milliseconds(1)) * 3 / 4)
        // At least twelve rounds and three kills, however slow the machine: a round that killed
        // nothing shortens the window to the run it saw end, so kills come by taking more rounds,
        // never by giving up on a time budget. Bounded in count (a round ends its child in 30 s).
        var kills = 0, round = 0
        while round < 12 || (kills < 3 && round < 60) {
            defer { round += 1 }
            let title = "edit \(round)"
            try HandEditSyncTests.editByHand(file, id: id, title: title)
            let started = ContinuousClock.now
            let child = try app.start(["list", "2031-07-01"])
            // Timed on a thread of its own: the test pool, starved on a loaded machine, would
            // wake late and find every run finished.
            let delay = UInt32(Int.random(in: 0...window, using: &random) * 1000)
            let process = child.process
            let killed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                Thread {
                    usleep(delay)
                    guard process.isRunning else { return continuation.resume(returning: false) }
                    Foundation.kill(process.processIdentifier, SIGKILL)
                    continuation.resume(returning: true)
                }.start()
            }
            _ = await child.waitForExit(before: .now + .seconds(30))
            if killed {
                kills += 1
            } else {
                window = max(2, Int((ContinuousClock.now - started) / .milliseconds(1)) * 3 / 4)
            }
            try await app.ok("list", "2031-07-01")
            // The model: every edit is in the file and in the one pending command (coalesced),
            // whose base is still the server's state.
            let commands = try Self.commands(app)
            #expect(commands.count == 1, "round \(round), seed \(seed): \(commands.count) commands")
            #expect((commands.last?["entity"] as? [String: Any])?["title"] as? String == title, "round \(round), seed \(seed)")
            #expect((commands.last?["base"] as? [String: Any])?["title"] as? String == "Walk", "round \(round), seed \(seed)")
            #expect(commands.last?["baseVersion"] as? String == version, "round \(round), seed \(seed)")
            #expect(try await app.export().todo(id)?["title"] as? String == title, "round \(round), seed \(seed)")
        }
        #expect(kills >= 3, "\(kills) of \(round) runs killed (seed \(seed))")
        print(
            "hand edit kills: \(kills) SIGKILLs in \(round) rounds at random instants of the adopting process, content and command together in every round (seed \(seed))"
        )
    }
}
