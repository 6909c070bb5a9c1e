@testable import Folio
import Foundation
import Testing

@Suite struct QueryTests {
    /// Twelve todos over four days of November and one of December.
    func seeded() async throws -> (TemporaryFolder, Store, [Todo]) {
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let days = ["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-30", "2026-12-01"]
        var todos: [Todo] = []
        for index in 0..<12 {
            todos.append(
                todo(
                    "Task \(String(format: "%02d", index))", on: days[index % days.count],
                    done: index % 3 == 0, priority: index % 4))
        }
        try await store.write { [todos] tx in for todo in todos { try tx.upsert(todo) } }
        return (folder, store, todos)
    }

    @Test func predicateSortLimitAndOffset() async throws {
        let (folder, store, todos) = try await seeded()
        _ = folder
        let open = try await store.fetch(
            Query<Todo>(
                where: #Predicate { !$0.done },
                sortedBy: [SortDescriptor(\.priority, order: .reverse), SortDescriptor(\.title)]))
        let expected = todos.filter { !$0.done }.sorted {
            ($0.priority, $1.title) > ($1.priority, $0.title)
        }
        #expect(open.map(\.title) == expected.map(\.title))

        let page = try await store.fetch(
            Query<Todo>(
                where: #Predicate { !$0.done }, sortedBy: [SortDescriptor(\.priority, order: .reverse), SortDescriptor(\.title)],
                limit: 3, offset: 2))
        #expect(page.map(\.title) == Array(expected.map(\.title)[2..<5]))

        let beyond = try await store.fetch(Query<Todo>(limit: 5, offset: 100))
        #expect(beyond.isEmpty)
        try await store.close()
    }

    @Test func selectionsReadOnlyTheirPartitions() async throws {
        let (folder, store, todos) = try await seeded()
        _ = folder
        func titles(_ selection: PartitionSelection) async throws -> Set<String> {
            Set(try await store.fetch(Query<Todo>(selection)).map(\.title))
        }
        func expected(_ keep: (String) -> Bool) -> Set<String> { Set(todos.filter { keep($0.date) }.map(\.title)) }
        #expect(try await titles(.day("2026-11-21")) == expected { $0 == "2026-11-21" })
        #expect(try await titles(.days(from: "2026-11-21", through: "2026-11-30")) == expected { $0 >= "2026-11-21" && $0 <= "2026-11-30" })
        #expect(try await titles(.month("2026-11")) == expected { $0.hasPrefix("2026-11") })
        #expect(try await titles(.months(from: "2026-11", through: "2026-12")) == Set(todos.map(\.title)))
        #expect(try await titles(.all) == Set(todos.map(\.title)))
        // The same after the files are written, from a fresh process.
        try await store.close()
        let reopened = try await Store.open(at: folder.url, configuration: .testing())
        #expect(
            Set(try await reopened.fetch(Query<Todo>(.days(from: "2026-11-21", through: "2026-11-30"))).map(\.title))
                == expected { $0 >= "2026-11-21" && $0 <= "2026-11-30" })
        try await reopened.close()
    }

    @Test func selectionsAreValidated() async throws {
        let (folder, store, _) = try await seeded()
        _ = folder
        await expectFolioError(.invalidName) { try await store.fetch(Query<Todo>(.day("2026-11-31"))) }
        await expectFolioError(.invalidName) { try await store.fetch(Query<Todo>(.day("../../etc"))) }
        await expectFolioError(.invalidQuery) { try await store.fetch(Query<Tag>(.day("2026-11-20"))) }
        await expectFolioError(.invalidQuery) { try await store.fetch(Query<DailyStat>(.day("2026-11-20"))) }
        try await store.close()
    }
}
