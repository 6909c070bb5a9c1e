import Foundation

/// What the growth group (`--only growth`) seeded and measured: day-partitioned stores of
/// several sizes with the same density (Runner+Growth.swift), and per measure and size one
/// ``Row``, its values Folio's per round and its peer's SQLite's of the same round. The rows
/// inform (no target): what they show is how each cost changes with the size, engine by engine.
struct Growth: Sendable {
    /// The five costs measured on every size.
    enum Measure: String, CaseIterable, Sendable {
        /// A durable transaction (upsert + its outbox command), committed one after the other on a
        /// copy of the store in use, its files written out first: microseconds per commit.
        case commit
        /// A fresh process opening the store, caches dropped: milliseconds.
        case coldOpen
        /// A one-day query in an open store, every day read once first: microseconds.
        case readDay
        /// A fresh process opening the store and getting one todo by id, caches dropped: milliseconds.
        case getByID
        /// Row 10's predicate over every day, the first query of a fresh process, files in the page
        /// cache: milliseconds.
        case scan

        var title: String {
            switch self {
            case .commit: return "durable commit"
            case .coldOpen: return "cold open"
            case .readDay: return "read one day, warm"
            case .getByID: return "cold open + get by id"
            case .scan: return "predicate scan"
            }
        }

        var unit: String {
            switch self {
            case .commit, .readDay: return "µs"
            case .coldOpen, .getByID, .scan: return "ms"
            }
        }

        var contender: String {
            switch self {
            case .commit: return "Folio full"
            case .coldOpen: return "Store.open"
            case .readDay: return "Folio (cache)"
            case .getByID: return "Folio get(id:)"
            case .scan: return "Folio .all + #Predicate"
            }
        }

        var peer: String {
            switch self {
            case .commit: return "GRDB WAL FULL"
            case .coldOpen: return "GRDB DatabasePool"
            case .readDay: return "GRDB by date index"
            case .getByID: return "GRDB primary key"
            case .scan: return "GRDB LIKE + done = 0"
            }
        }
    }

    /// The stores, smallest first.
    var stores: [DayStore] = []
    var rows: [Int: [Measure: Row]] = [:]

    /// Records one round's value of each engine for `measure` on the store of `days` days.
    mutating func record(_ measure: Measure, days: Int, folio: Double, grdb: Double) {
        var row =
            rows[days]?[measure]
            ?? Row(
                name: "growth: \(measure.title), \(Row.span(days: days))", unit: measure.unit, direction: .lowerIsBetter,
                contender: measure.contender, peer: measure.peer)
        row.values.append(folio)
        row.peerValues.append(grdb)
        rows[days, default: [:]][measure] = row
    }

    /// The measured rows, by size then measure.
    var measuredRows: [(days: Int, measure: Measure, row: Row)] {
        stores.flatMap { store in
            Measure.allCases.compactMap { measure in rows[store.days]?[measure].map { (store.days, measure, $0) } }
        }
    }

    /// The JSON report's key of a row.
    static func key(_ measure: Measure, days: Int) -> String { "growth.\(measure.rawValue).\(days)Days" }
}
