@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

@Suite struct PartitioningTests {
    /// A day key is exactly what the ISO 8601 (proleptic Gregorian) calendar calls a day, written `YYYY-MM-DD` (FORMAT.md):
    /// the parser against a model that asks Foundation's calendar, on random near-misses (a digit,
    /// a dash or a byte changed, a day past the month's end, a leap day, non-ASCII digits).
    @Test func dayKeysAreExactlyTheCalendarsDays() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        func model(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            guard bytes.count == 10, bytes[4] == 0x2D, bytes[7] == 0x2D,
                bytes.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || (0x30...0x39).contains($0.element) }),
                let year = Int(text.prefix(4)), let month = Int(text.dropFirst(5).prefix(2)), let day = Int(text.suffix(2)),
                year >= 1, (1...12).contains(month), day >= 1
            else { return false }
            // The calendar repeats every 400 years in ISO 8601's proleptic Gregorian calendar (the
            // one FORMAT.md's keys use); Foundation's switches to the Julian one before 1582-10-15.
            // So the day is asked 2,000 years later, where both agree.
            let components = DateComponents(year: year + 2000, month: month, day: day)
            guard let date = calendar.date(from: components) else { return false }
            return calendar.dateComponents([.year, .month, .day], from: date) == components
        }
        let seed = ProcessInfo.processInfo.environment["FOLIO_DAY_KEY_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let pieces = ["0", "1", "2", "9", "-", "/", " ", "+", "a", "٣", "é", "\u{301}"]
        var disagreements: [String] = []
        var accepted = 0
        for round in 0..<20_000 {
            let year = Int.random(in: 0...2400, using: &random), month = Int.random(in: 0...13, using: &random)
            let day = Int.random(in: 0...32, using: &random)
            var text = String(format: "%04d-%02d-%02d", year, month, day)
            if round % 3 == 0 {
                var characters = Array(text)
                let at = Int.random(in: 0..<characters.count, using: &random)
                switch Int.random(in: 0...2, using: &random) {
                case 0: characters[at] = Character(pieces.randomElement(using: &random)!)
                case 1: characters.insert(Character(pieces.randomElement(using: &random)!), at: at)
                default: characters.remove(at: at)
                }
                text = String(characters)
            }
            let parsed = PartitionKey.day(parsing: text)
            if parsed != nil { accepted += 1 }
            if (parsed != nil) != model(text) || (parsed != nil && parsed?.text != text) { disagreements.append(text) }
        }
        print("day keys: 20000 texts, \(accepted) days, \(disagreements.count) disagreements with the calendar (seed \(seed))")
        #expect(disagreements.isEmpty, "seed \(seed): \(disagreements.prefix(10))")
        #expect(accepted > 5_000)
    }

    @Test func eachPartitioningRoundTripsThroughItsFile() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        let work = Tag(id: "work", name: "Work", color: "#FF8800")
        let stat = DailyStat(date: "2026-11-22", completed: 3, tagStats: [TagStat(id: "s1", tagID: "work", count: 3)])
        // 2026-11-21 20:00 UTC is 2026-11-22 05:00 in Seoul.
        let call = Reminder(id: "call-mom", due: Date(timeIntervalSince1970: 1_795_291_200))
        try await store.write { tx in
            try tx.upsert(milk)
            try tx.upsert(work)
            try tx.upsert(stat)
            try tx.upsert(call)
        }
        try await store.close()

        #expect(
            folder.allFiles().filter { !$0.hasPrefix(".folio") && !$0.hasPrefix("outbox/") } == [
                "dailyStats/2026-11.json", "folio.json", "reminders/2026-11/2026-11-22.json",
                "tags.json", "todos/2026-11/2026-11-22.json",
            ])
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.get(Todo.self, id: milk.id) == milk)
        #expect(try await reopened.get(Tag.self, id: "work") == work)
        #expect(try await reopened.get(DailyStat.self, id: "2026-11-22") == stat)
        #expect(try await reopened.get(Reminder.self, id: "call-mom") == call)
        #expect(try await reopened.fetch(Query<DailyStat>(.month("2026-11"))) == [stat])
        #expect(try await reopened.fetch(Query<Tag>()) == [work])
        try await reopened.close()
    }

    @Test func movingToAnotherDayIsOneUpsert() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        var milk = todo("Buy milk", on: "2026-11-22")
        let bread = todo("Buy bread", on: "2026-11-22")
        try await store.write { [milk] tx in
            try tx.upsert(milk)
            try tx.upsert(bread)
        }
        try await store.checkpoint()
        milk.date = "2026-12-01"
        try await store.write { [milk] tx in try tx.upsert(milk) }

        #expect(try await store.fetch(Query<Todo>(.day("2026-11-22"))) == [bread])
        #expect(try await store.fetch(Query<Todo>(.day("2026-12-01"))) == [milk])
        #expect(try await store.get(Todo.self, id: milk.id) == milk)
        try await store.checkpoint()
        #expect(!(try folder.text("todos/2026-11/2026-11-22.json")).contains(milk.id.uuidString))
        #expect(try folder.text("todos/2026-12/2026-12-01.json").contains(milk.id.uuidString))

        // Moving the last entity out of a day removes that day's file.
        var moved = bread
        moved.date = "2026-12-01"
        try await store.write { [moved] tx in try tx.upsert(moved) }
        try await store.close()
        #expect(!folder.exists("todos/2026-11/2026-11-22.json"))

        // A fresh process (no cached index) finds and moves it too.
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        milk.date = "2026-11-30"
        try await reopened.write { [milk] tx in try tx.upsert(milk) }
        #expect(try await reopened.fetch(Query<Todo>(.day("2026-12-01"))) == [moved])
        #expect(try await reopened.fetch(Query<Todo>()).count == 2)
        try await reopened.close()
    }

    @Test func uuidAndStringIDsBothWork() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        try await store.write { tx in
            try tx.upsert(milk)
            try tx.upsert(Tag(id: "home", name: "Home", color: "#00FF00"))
        }
        #expect(try await store.get(Todo.self, id: milk.id)?.title == "Buy milk")
        #expect(try await store.get(Tag.self, id: "home")?.name == "Home")
        try await store.write { [id = milk.id] tx in
            let deletedTodo = try tx.delete(Todo.self, id: id)
            let deletedTag = try tx.delete(Tag.self, id: "home")
            let deletedNothing = try tx.delete(Tag.self, id: "nowhere")
            #expect(deletedTodo && deletedTag && !deletedNothing)
        }
        #expect(try await store.get(Todo.self, id: milk.id) == nil)
        #expect(try await store.get(Tag.self, id: "home") == nil)
        try await store.close()
    }

    @Test func aThrowingBlockChangesNothing() async throws {
        struct Oops: Error {}
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        try await store.write { tx in try tx.upsert(milk) }
        await #expect(throws: Oops.self) {
            try await store.write { tx in
                try tx.upsert(todo("Never", on: "2026-11-23"))
                try tx.delete(Todo.self, id: milk.id)
                throw Oops()
            }
        }
        #expect(try await store.fetch(Query<Todo>()) == [milk])
        try await store.close()
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(try await reopened.fetch(Query<Todo>()) == [milk])
        try await reopened.close()
    }

    @Test func aTransactionSeesItsOwnChanges() async throws {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let milk = todo("Buy milk", on: "2026-11-22")
        let count = try await store.write { tx in
            try tx.upsert(milk)
            try tx.upsert(todo("Done already", on: "2026-11-23", done: true))
            let seen = try tx.get(Todo.self, id: milk.id)
            #expect(seen == milk)
            let removed = try tx.deleteAll(Query<Todo>(where: #Predicate { $0.done }))
            let remaining = try tx.fetch(Query<Todo>())
            #expect(remaining == [milk])
            return removed
        }
        #expect(count == 1)
        #expect(try await store.fetch(Query<Todo>()) == [milk])
        try await store.close()
    }
}
