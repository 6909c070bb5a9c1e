import Foundation
import Testing

/// The `todo` example app used offline, as a process per command: changes land in the files and
/// the outbox, and each day's DailyStat follows its todos in the same transaction.
@Suite struct TodoAppTests {
    @Test func addOfflineThenList() async throws {
        let app = TodoCLI()
        try await app.ok("tag", "add", "errands", "--color", "#ff8800")
        let milk = try await app.add("Buy milk", "--date", "2031-03-10", "--tag", "Errands", "--priority", "2")
        try await app.ok("add", "Call", "mom", "--date", "2031-03-10")   // the words make one title
        let mom = try #require(try await app.export().todos.first { $0["title"] as? String == "Call mom" }?["id"] as? String)
        _ = try await app.add("Elsewhere", "--date", "2031-03-11")

        let lines = try await app.ok("list", "2031-03-10")
        #expect(
            lines == [
                "2031-03-10: 2 todos, 0 done",
                "  [ ] \(milk.prefix(8))  Buy milk  !2  #errands  (pending)",
                "  [ ] \(mom.prefix(8))  Call mom  (pending)",
            ])
        // No server was ever involved: one command per change waits in the outbox, in order.
        #expect(try app.outbox() == [1, 2, 3, 4])
        #expect(app.folder.exists("todos/2031-03/2031-03-10.json"))
        let todo = try #require(try await app.export().todo(milk))
        #expect(todo["title"] as? String == "Buy milk" && todo["date"] as? String == "2031-03-10" && todo["priority"] as? Int == 2)
        #expect(try await app.ok("list", "2031-03-12") == ["no todos on 2031-03-12"])
        #expect(try await app.export().tags.map { $0["color"] as? String } == ["#FF8800"])
    }

    @Test func changesUpdateTheLocalDailyStats() async throws {
        let app = TodoCLI()
        try await app.ok("tag", "add", "home")
        let home = try #require(try await app.export().tags.first?["id"] as? String)
        let a = try await app.add("A", "--date", "2031-03-31", "--tag", "home")
        let b = try await app.add("B", "--date", "2031-03-31")
        #expect(summary(try app.stats("2031-03")["2031-03-31"]) == "0/2")

        try await app.ok("done", a)
        #expect(summary(try app.stats("2031-03")["2031-03-31"]) == "1/2 \(home):1")
        let stat = try #require(try app.stats("2031-03")["2031-03-31"])
        #expect(stat["id"] as? String == "2031-03-31" && stat["date"] as? String == "2031-03-31")
        #expect((stat["tagStats"] as? [[String: Any]])?.first?["id"] as? String == "2031-03-31:\(home)")

        // A move recomputes both days, here in two month files, in one transaction.
        try await app.ok("move", String(a.prefix(6)), "2031-04-01")
        #expect(summary(try app.stats("2031-03")["2031-03-31"]) == "0/1")
        #expect(summary(try app.stats("2031-04")["2031-04-01"]) == "1/1 \(home):1")

        try await app.ok("edit", b, "--tag", "home", "--title", "B2", "--priority", "3")
        try await app.ok("done", b)
        #expect(summary(try app.stats("2031-03")["2031-03-31"]) == "1/1 \(home):1")
        try await app.ok("done", b)   // a toggle: not done again
        #expect(summary(try app.stats("2031-03")["2031-03-31"]) == "0/1")
        let edited = try #require(try await app.export().todo(b))
        #expect(edited["title"] as? String == "B2" && edited["priority"] as? Int == 3 && edited["done"] as? Bool == false)

        // The last todo of a day gone: no stat for that day (and no file for an empty month).
        try await app.ok("delete", b)
        #expect(try app.stats("2031-03").isEmpty)
        #expect(!app.folder.exists("dailyStats/2031-03.json"))
        #expect(try await app.ok("stats", "2031-04") == ["2031-04: 1 of 1 todos done", "  2031-04-01  1/1 done  #home 1"])
    }

    @Test func anAmbiguousIdPrefixIsAUsageError() async throws {
        let app = TodoCLI()
        // Ids are random: add todos until two share their first character (17 always do).
        var firstCharacters: [Character: [String]] = [:]
        var shared: [String] = []
        for index in 0..<17 where shared.isEmpty {
            let id = try await app.add("todo \(index)", "--date", "2031-05-01")
            firstCharacters[id.first ?? "?", default: []].append(id)
            if let both = firstCharacters[id.first ?? "?"], both.count == 2 { shared = both }
        }
        try #require(shared.count == 2)
        let before = NSDictionary(dictionary: try await app.export().object)

        let ambiguous = try await app.run("done", String(shared[0].prefix(1)).lowercased())
        #expect(ambiguous.status == 2)
        #expect(ambiguous.errors.contains("ambiguous") && ambiguous.errors.contains(shared[0]) && ambiguous.errors.contains(shared[1]))
        let unknown = try await app.run("delete", "not-an-id")
        #expect(unknown.status == 1 && unknown.errors.contains("no todo id starts with not-an-id"))
        #expect(NSDictionary(dictionary: try await app.export().object) == before, "nothing changed")

        // A longer prefix, or the whole id, names one.
        try await app.ok("done", shared[0])
        try await app.ok("done", String(shared[1].prefix(9)))
        #expect(try await app.export().todos.filter { $0["done"] as? Bool == true }.count == 2)
    }

    @Test func tagsAreRenamedAndDeleted() async throws {
        let app = TodoCLI()
        try await app.ok("tag", "add", "work", "--color", "#0000AA")
        let a = try await app.add("A", "--date", "2031-06-01", "--tag", "work")
        try await app.ok("tag", "rename", "WORK", "job")
        #expect(try await app.ok("tags") == ["#0000AA  job  (pending)"])
        let b = try await app.add("B", "--date", "2031-06-02", "--tag", "Job")
        try await app.ok("done", a)
        try await app.ok("done", b)
        let job = try #require(try await app.export().tags.first?["id"] as? String)
        #expect(try await app.export().todos.allSatisfy { $0["tagID"] as? String == job })
        #expect(try await app.run("tag", "add", "job").status == 1, "names are unique, in any case")
        #expect(try await app.run("tag", "rename", "nothing", "x").status == 1)
        #expect(try await app.run("tag", "add", "x", "--color", "orange").status == 2)

        // Deleting the tag untags its todos and their days' stats, in the same transaction.
        #expect(try await app.ok("tag", "delete", "job") == ["deleted tag job; 2 todos are untagged now"])
        #expect(try await app.export().todos.allSatisfy { $0["tagID"] == nil })
        #expect(try await app.export().tags.isEmpty)
        #expect(summary(try app.stats("2031-06")["2031-06-01"]) == "1/1")
        #expect(summary(try app.stats("2031-06")["2031-06-02"]) == "1/1")
        #expect(try await app.ok("tags") == ["no tags (add one with `todo tag add NAME`)"])
    }

    @Test func usageErrorsExitWithTwo() async throws {
        let app = TodoCLI()
        for arguments in [
            [], ["frobnicate"], ["add"], ["add", "x", "--priority", "4"], ["add", "x", "--date", "2031-02-30"],
            ["list", "a", "b"], ["edit", "abc"], ["move", "abc"], ["tag"], ["stats", "2031-13"],
            ["add", "x", "--bogus"], ["sync"], ["sync", "--server", "ftp://example.com/"],
        ] {
            let outcome = try await app.run(arguments)
            #expect(outcome.status == 2, "todo \(arguments): \(outcome.errors)")
            #expect(outcome.errors.hasPrefix("todo: "), "todo \(arguments): \(outcome.errors)")
        }
        let help = try await app.run("add", "--help")
        #expect(help.status == 0 && help.output.hasPrefix("usage: todo add TITLE"))
        #expect(try await app.ok("--help").contains { $0.hasPrefix("todo sync --server URL") })
        #expect(try await app.export().todos.isEmpty, "no usage error changed anything")
    }
}
