import Foundation

/// The entities every store of the outbox group holds (Runner+OutboxSeed.swift): day-partitioned
/// todos (a push collection) and drafts (a push collection that coalesces), the same in every
/// store. A store of length N holds the first N of them in pending order as waiting commands, half
/// todos and half drafts; the others as data already on the server. Each next length's pending
/// entities include the previous one's.
struct OutboxData: Sendable {
    let todos: Workload
    let drafts: [Draft]
    /// Indexes into `todos.todos` and `drafts`, newest day first (offline changes are recent ones).
    let todoOrder: [Int]
    let draftOrder: [Int]

    init(seed: UInt64, todosPerDay: Double, days: Int) {
        let count = Int(todosPerDay * Double(days))
        todos = Workload(seed: seed ^ 0x29, todoCount: count, dayCount: days)
        drafts = Workload(seed: seed ^ 0x29D, todoCount: count, dayCount: days).todos.map(Draft.init)
        todoOrder = Self.newestFirst(todos.todos.map { ($0.date, $0.id) })
        draftOrder = Self.newestFirst(drafts.map { ($0.date, $0.id) })
    }

    /// The entities pending in the store of `length` commands: the first half (rounded up) of the
    /// todos' order and the rest of the drafts'.
    func pending(length: Int) -> (todos: [Todo], drafts: [Draft]) {
        let todoCount = (length + 1) / 2
        return (todoOrder.prefix(todoCount).map { todos.todos[$0] }, draftOrder.prefix(length - todoCount).map { drafts[$0] })
    }

    /// The last day ("today") and how many todos it holds: what the cold open reads.
    var today: String { todos.days[todos.days.count - 1] }
    var todayTodos: Int { todos.todosByDay[today]?.count ?? 0 }

    private static func newestFirst(_ keys: [(date: String, id: String)]) -> [Int] {
        keys.indices.sorted { keys[$0].date != keys[$1].date ? keys[$0].date > keys[$1].date : keys[$0].id < keys[$1].id }
    }
}

/// One store of the outbox group: Folio's folder and SQLite's file with the same entities and
/// `length` pending commands (SQLite's `outbox` table holds as many rows).
struct OutboxStore: Sendable {
    let folio: URL
    let grdb: URL
    let length: Int
    let pendingTodos: [Todo]
    let pendingDrafts: [Draft]

    /// The entity whose sync status is asked: the newest pending todo, pending in every store
    /// (one command).
    var statusID: String { pendingTodos[0].id }
}
