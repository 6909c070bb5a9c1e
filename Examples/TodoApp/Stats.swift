import Folio
import Foundation

extension DailyStat {
    /// The stat of one day, from that day's todos: the same computation as the server's.
    /// A tag appears in `tagStats` once it has a done todo that day; todos without a tag count
    /// only in `total` and `completed`.
    init(date: String, todos: [Todo]) {
        let done = todos.filter(\.done)
        let perTag = Dictionary(grouping: done.compactMap(\.tagID), by: { $0 }).sorted { $0.key < $1.key }
        self.init(
            id: date, date: date, total: todos.count, completed: done.count,
            tagStats: perTag.map { TagStat(id: "\(date):\($0.key)", tagID: $0.key, count: $0.value.count) })
    }
}

extension Transaction {
    /// Recomputes the DailyStat of each day from its todos, inside the transaction that changed
    /// them: the stat and the todos are committed together, so `todo stats` is right offline and
    /// after a crash. Call it with every day a change touched (both days of a move). A day left
    /// with no todos has no stat. The server's value replaces this one at the next sync.
    func refreshStats<Days: Sequence<String>>(of days: Days) throws {
        for day in Set(days) {
            let todos = try fetch(Query<Todo>(.day(day)))
            if todos.isEmpty {
                try delete(DailyStat.self, id: day)
            } else {
                try upsert(DailyStat(date: day, todos: todos))
            }
        }
    }
}
