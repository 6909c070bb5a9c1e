import Folio
import Foundation

enum StatsCommand {
    /// `todo stats [YYYY-MM]`: the month's DailyStats (TyTE's "productivity diamond"), one line a
    /// day, read from `dailyStats/YYYY-MM.json`.
    static func run(_ arguments: Arguments, _ store: Store) async throws {
        guard arguments.positional.count <= 1 else { throw UsageError("stats takes at most one month") }
        let month = try arguments.positional.first.map(Day.parseMonth) ?? String(Day.today.prefix(7))
        // Reading the month's todos first adopts a todo file edited by hand, and the
        // onOutsideEdit hook (main.swift) recomputes its days' stats before they are shown.
        _ = try await store.fetch(Query<Todo>(.month(month)))
        let stats = try await store.fetch(Query<DailyStat>(.month(month), sortedBy: [SortDescriptor(\.date)]))
        guard !stats.isEmpty else {
            print("no todos in \(month)")
            return
        }
        let tagNames = try await TagCommands.names(store)
        print("\(month): \(stats.map(\.completed).reduce(0, +)) of \(stats.map(\.total).reduce(0, +)) todos done")
        for stat in stats {
            // A TagStat whose tag is not here (yet) shows the tag's id: the link is kept, never dropped.
            let tags = stat.tagStats.map { "#\(tagNames[$0.tagID] ?? $0.tagID) \($0.count)" }.joined(separator: ", ")
            print("  \(stat.date)  \(stat.completed)/\(stat.total) done" + (tags.isEmpty ? "" : "  \(tags)"))
        }
    }
}
