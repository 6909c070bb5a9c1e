import Foundation

/// A day-partitioned store seeded in both engines with the same todos (Runner.seedDayStore): Folio's
/// folder, SQLite's file and the workload they hold. The ten-year store is one, and so is each of
/// the growth group's stores.
struct DayStore: Sendable {
    let folio: URL
    let grdb: URL
    let workload: Workload
    /// How many of its todos row 10's predicate (title contains ``Runner/scanWord``, not done)
    /// selects, from the workload itself.
    let scanMatches: Int

    init(folio: URL, grdb: URL, workload: Workload) {
        (self.folio, self.grdb, self.workload) = (folio, grdb, workload)
        scanMatches = Self.scanMatches(workload)
    }

    var days: Int { workload.days.count }

    /// The last day of the store ("today"), and how many todos it holds.
    var today: String { workload.days[workload.days.count - 1] }
    var todayTodos: Int { workload.todosByDay[today]?.count ?? 0 }

    static func scanMatches(_ workload: Workload) -> Int {
        workload.todos.filter { $0.title.contains(Runner.scanWord) && !$0.done }.count
    }
}
