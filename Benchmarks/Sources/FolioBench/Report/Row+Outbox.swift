import Foundation

extension Row {
    /// The outbox group's target rows (issue 29: pending commands cost nothing until they are
    /// sent): each measure with the longest outbox over the same measure with the shortest, Folio's
    /// values of the same round, at most 1.2×; the `folio` tool's commands at most 1 s with the
    /// longest outbox (their peer is the same command with the shortest outbox, for the chart).
    static func outboxTable(shortest: Int, longest: Int) -> [Key: Row] {
        var rows: [Key: Row] = [:]
        let span = "\(Format.count(longest)) ÷ \(Format.count(shortest)) pending"
        for measure in OutboxAxis.Measure.allCases {
            if measure.isTool {
                rows[measure.targetKey] = Row(
                    name: "outbox: \(measure.title), \(Format.count(longest)) pending", unit: "ms", direction: .lowerIsBetter,
                    contender: "\(Format.count(longest)) pending", peer: "\(Format.count(shortest)) pending",
                    target: 1000, targetKind: .value)
            } else {
                rows[measure.targetKey] = Row(
                    name: "outbox: \(measure.title), \(span)", unit: measure.unit, direction: .lowerIsBetter,
                    contender: "Folio, \(Format.count(longest)) pending", peer: "Folio, \(Format.count(shortest)) pending",
                    target: 1.2)
            }
        }
        return rows
    }
}
