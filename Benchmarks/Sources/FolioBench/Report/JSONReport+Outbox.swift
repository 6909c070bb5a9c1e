import Foundation

extension JSONReport {
    /// The outbox group (`--only outbox`): the entities every store holds, each store's length and
    /// seeding time, and a row per measure and length (GRDB the peer, no target; the `folio`
    /// tool's rows have no peer). The target rows are in ``JSONReport/rows`` (keys `outbox…`).
    struct OutboxResult: Codable {
        struct Store: Codable {
            var length: Int
            var pendingTodos: Int
            var pendingDrafts: Int
            var folioSeedSeconds: Double?
            var grdbSeedSeconds: Double?
        }

        struct Point: Codable {
            /// ``OutboxAxis/Measure``'s raw value.
            var measure: String
            var length: Int
            var row: RowResult
        }

        /// Day partitions of each collection, and the todos and drafts every store holds.
        var days: Int
        var todos: Int
        var drafts: Int
        /// Warm commits (one more, untimed, before them) and warm sync statuses per measure.
        var operations: Int
        /// The `folio` tool measured, or why its rows are missing.
        var tool: String?
        var toolProblem: String?
        var stores: [Store]
        var points: [Point]

        @MainActor
        init?(_ runner: Runner) {
            let axis = runner.outbox
            guard let data = axis.data, !axis.rows.isEmpty else { return nil }
            (days, todos, drafts) = (data.todos.days.count, data.todos.todos.count, data.drafts.count)
            operations = runner.options.outboxOps
            (tool, toolProblem) = (axis.cli, axis.cliProblem)
            stores = axis.stores.map { store in
                Store(
                    length: store.length, pendingTodos: store.pendingTodos.count, pendingDrafts: store.pendingDrafts.count,
                    folioSeedSeconds: axis.seedSeconds[store.length]?.folio, grdbSeedSeconds: axis.seedSeconds[store.length]?.grdb)
            }
            points = axis.measuredRows.map {
                Point(measure: $0.measure.rawValue, length: $0.length, row: JSONReport.result(key: OutboxAxis.key($0.measure, length: $0.length), $0.row))
            }
        }
    }
}
