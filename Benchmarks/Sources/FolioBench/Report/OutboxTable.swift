import Foundation

/// The outbox group as text: a line per measure, Folio / GRDB at each length (medians of the
/// rounds) and how much each grew from the shortest outbox to the longest; then how long seeding
/// took and which `folio` tool ran. The target rows are in the main table.
enum OutboxTable {
    static func lines(_ axis: OutboxAxis, rounds: Int) -> [String] {
        let lengths = axis.stores.map(\.length)
        guard let shortest = lengths.first, let longest = lengths.last else { return [] }
        var out = [
            "Growth with the outbox's length (Folio / GRDB, median of \(rounds) round\(rounds == 1 ? "" : "s"); × = "
                + "\(Format.count(longest)) pending over \(Format.count(shortest)); the folio tool has no peer):"
        ]
        let width = (OutboxAxis.Measure.allCases.map { $0.title.count + $0.unit.count + 3 }.max() ?? 30) + 2
        let column = 19
        out.append(
            Format.pad("pending commands", width, left: true) + lengths.map { " " + Format.pad(Format.count($0), column) }.joined()
                + "  " + Format.pad("×", 17))
        for measure in OutboxAxis.Measure.allCases {
            let rows = lengths.map { axis.rows[$0]?[measure] }
            guard rows.contains(where: { $0 != nil }) else { continue }
            func pair(_ row: Row?) -> String {
                guard let row else { return "—" }
                let folio = Format.value(median(row.values))
                return row.peerValues.isEmpty ? folio : folio + " / " + Format.value(median(row.peerValues))
            }
            func growth(_ side: KeyPath<Row, [Double]>) -> String {
                guard let first = rows.first??[keyPath: side], let last = rows.last??[keyPath: side], !first.isEmpty, !last.isEmpty else { return "" }
                return Format.ratio(median(last) / median(first))
            }
            let factor = [growth(\.values), growth(\.peerValues)].filter { !$0.isEmpty }.joined(separator: " / ")
            out.append(
                Format.pad("\(measure.title) (\(measure.unit))", width, left: true) + rows.map { " " + Format.pad(pair($0), column) }.joined()
                    + "  " + Format.pad(factor, 17))
        }
        out.append(
            "seeding (Folio, GRDB): "
                + lengths.map { length in
                    let seconds = axis.seedSeconds[length]
                    return "\(Format.count(length)): \(seconds.map { Format.value($0.folio) + " s, " + Format.value($0.grdb) + " s" } ?? "—")"
                }.joined(separator: "; "))
        out.append(axis.cli.map { "folio tool: \($0)" } ?? "folio tool: NOT MEASURED: \(axis.cliProblem ?? "not found")")
        return out
    }
}
