import Foundation

/// What the outbox group (`--only outbox`) seeded and measured: stores with the same entities
/// and outboxes of several lengths (Runner+Outbox.swift), and per measure and length one ``Row``,
/// its values Folio's per round and its peer's SQLite's of the same round (the `folio` tool's
/// measures have no peer). The target rows (each measure at the longest outbox over the
/// shortest, Folio's) are rows of the main table (Row+Outbox.swift).
struct OutboxAxis: Sendable {
    enum Measure: String, CaseIterable, Sendable {
        /// A fresh process opening the store, caches dropped (row 5's cold child): ms.
        case coldOpen
        /// A one-day query in an open store, every day read once first (row 5's warm read): µs.
        case readDay
        /// One entity's sync status in an open store that answered once before: µs per call.
        case statusWarm
        /// The first sync status of a fresh process (the open not timed), files cached: ms.
        case statusFresh
        /// A durable commit of one todo (its command queued), in an open store that committed once
        /// before: µs per commit.
        case commitWarm
        /// A fresh process opening the store and committing one todo: ms.
        case commitFresh
        /// A durable commit of one draft whose pending command it replaces: µs per commit.
        case coalescedWarm
        /// A fresh process opening the store and committing one such draft: ms.
        case coalescedFresh
        /// `folio status DIR` as a process: ms.
        case cliStatus
        /// `folio outbox list DIR` as a process: ms.
        case cliList

        var title: String {
            switch self {
            case .coldOpen: return "cold open"
            case .readDay: return "read one day, warm"
            case .statusWarm: return "sync status, warm"
            case .statusFresh: return "sync status, fresh process"
            case .commitWarm: return "durable commit, warm"
            case .commitFresh: return "commit, fresh process"
            case .coalescedWarm: return "coalescing commit, warm"
            case .coalescedFresh: return "coalescing, fresh process"
            case .cliStatus: return "folio status"
            case .cliList: return "folio outbox list"
            }
        }

        var unit: String {
            switch self {
            case .readDay, .statusWarm, .commitWarm, .coalescedWarm: return "µs"
            case .coldOpen, .statusFresh, .commitFresh, .coalescedFresh, .cliStatus, .cliList: return "ms"
            }
        }

        var contender: String {
            switch self {
            case .coldOpen: return "Store.open"
            case .readDay: return "Folio (cache)"
            case .statusWarm, .statusFresh: return "Folio syncStatus"
            case .commitWarm, .commitFresh, .coalescedWarm, .coalescedFresh: return "Folio full"
            case .cliStatus: return "folio status DIR"
            case .cliList: return "folio outbox list DIR"
            }
        }

        /// SQLite's side, or nil where there is none (the `folio` tool).
        var peer: String? {
            switch self {
            case .coldOpen: return "GRDB DatabasePool"
            case .readDay: return "GRDB by date index"
            case .statusWarm, .statusFresh: return "GRDB COUNT by entity"
            case .commitWarm, .commitFresh: return "GRDB WAL FULL"
            case .coalescedWarm, .coalescedFresh: return "GRDB FULL delete+insert"
            case .cliStatus, .cliList: return nil
            }
        }

        /// The row of the main table that holds this measure's target.
        var targetKey: Row.Key {
            switch self {
            case .coldOpen: return .outboxColdOpen
            case .readDay: return .outboxReadDay
            case .statusWarm: return .outboxStatusWarm
            case .statusFresh: return .outboxStatusFresh
            case .commitWarm: return .outboxCommitWarm
            case .commitFresh: return .outboxCommitFresh
            case .coalescedWarm: return .outboxCoalescedWarm
            case .coalescedFresh: return .outboxCoalescedFresh
            case .cliStatus: return .outboxCLIStatus
            case .cliList: return .outboxCLIList
            }
        }

        /// Whether it runs the `folio` tool (a bound on its time, not on its growth).
        var isTool: Bool { self == .cliStatus || self == .cliList }
    }

    /// The entities every store holds (nil until seeded).
    var data: OutboxData?
    /// The stores, shortest outbox first.
    var stores: [OutboxStore] = []
    var rows: [Int: [Measure: Row]] = [:]
    /// Seconds seeding each length took, Folio's and SQLite's (not timed rows: the report says it).
    var seedSeconds: [Int: (folio: Double, grdb: Double)] = [:]
    /// The `folio` tool measured, or why its rows are missing.
    var cli: String?
    var cliProblem: String?

    /// Records one round's value of each engine for `measure` at `length` (`grdb` nil for the tool).
    mutating func record(_ measure: Measure, length: Int, folio: Double, grdb: Double?) {
        var row =
            rows[length]?[measure]
            ?? Row(
                name: "outbox \(Format.count(length)): \(measure.title)", unit: measure.unit, direction: .lowerIsBetter,
                contender: measure.contender, peer: measure.peer)
        row.values.append(folio)
        if let grdb { row.peerValues.append(grdb) }
        rows[length, default: [:]][measure] = row
    }

    /// The measured rows, by length then measure.
    var measuredRows: [(length: Int, measure: Measure, row: Row)] {
        stores.flatMap { store in
            Measure.allCases.compactMap { measure in rows[store.length]?[measure].map { (store.length, measure, $0) } }
        }
    }

    /// The JSON report's key of a row.
    static func key(_ measure: Measure, length: Int) -> String { "outbox.\(measure.rawValue).\(length)Pending" }
}
