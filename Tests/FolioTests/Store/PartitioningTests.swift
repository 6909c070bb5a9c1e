@testable import Folio
import Foundation
import Testing

@Suite struct PartitioningTests {
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

        #expect(folder.allFiles().filter { !$0.hasPrefix(".folio") && !$0.hasPrefix("outbox/") } == [
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
