import Foundation

/// The scan matrix as text: one table per entity shape, a line per selectivity × process × page
/// cache, for each Folio contender its median milliseconds and the median of its per-round
/// ratios to GRDB, then GRDB's median; and how SQLite ran each predicate.
enum ScanMatrixTable {
    static func lines(_ matrix: ScanMatrix, rounds: Int) -> [String] {
        var out: [String] = []
        for shape in ScanShape.allCases {
            guard let store = matrix.stores[shape] else { continue }
            out.append("Scan matrix, \(shape.title): \(store.entities) entities over \(store.days) days.")
            out.append(
                "On disk: Folio \(store.dataFiles) day files, \(mebibytes(store.dataBytes)), field index \(mebibytes(store.indexBytes)); "
                    + "SQLite \(mebibytes(store.sqliteBytes)).")
            out.append(
                "Median ms over \(rounds) round\(rounds == 1 ? "" : "s"); ×GRDB: median of the per-round ratios to GRDB "
                    + "(target ≤ \(Format.ratio(ScanMatrix.target))). FOLIO_SCAN_WITHOUT: all (unset), -rows (rows), "
                    + "fields only (rows,index), plain decode (fields,index,rows).")
            let cells = ScanMatrix.cells.filter { $0.shape == shape }
            let labels = cells.map { label($0, store) }
            let width = (labels.map(\.count).max() ?? 30) + 2
            var header = Format.pad("", width + 16)
            var units =
                Format.pad("share, predicate (matches)", width, left: true) + Format.pad("process", 9, left: true)
                + Format.pad("cache", 7, left: true)
            for contender in ScanContender.folio {
                header += Format.pad(contender.heading, 20)
                units += Format.pad("ms", 12) + Format.pad("×GRDB", 8)
            }
            header += Format.pad(ScanContender.grdb.heading, 10)
            units += Format.pad("ms", 10)
            out.append(header)
            out.append(units)
            out.append(String(repeating: "-", count: units.count))
            for (cell, text) in zip(cells, labels) {
                var line =
                    Format.pad(text, width, left: true) + Format.pad(cell.process.rawValue, 9, left: true)
                    + Format.pad(cell.cache.rawValue, 7, left: true)
                let rows = matrix.rows[cell] ?? [:]
                for contender in ScanContender.folio {
                    let row = rows[contender]
                    line +=
                        Format.pad(row.map { Format.value(median($0.values)) } ?? "—", 12)
                        + Format.pad(row.map { Format.ratio($0.medianRatio) } ?? "", 8)
                }
                line += Format.pad(rows[.all].map { Format.value(median($0.peerValues)) } ?? "—", 10)
                out.append(line)
            }
            out.append("SQLite's plans: " + ScanSelectivity.allCases.map { "\($0.rawValue): \(store.plans[$0] ?? "?")" }.joined(separator: "; "))
            out.append("")
        }
        out.append(
            "Each value is a child process: fresh = the first query after opening the store; warm = the median of "
                + "\(ScanRuns.minimumRuns)+ runs after an untimed one (cold cache: \(ScanRuns.minimumRuns) runs, caches dropped before each).")
        return out
    }

    private static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }

    /// "0.1% title contains "piano" (98)": the first column of a cell's line.
    private static func label(_ cell: ScanMatrix.Cell, _ store: ScanMatrix.Store) -> String {
        Format.pad(cell.selectivity.rawValue, 5, left: true) + " " + cell.shape.predicateText(cell.selectivity)
            + " (\(store.matches[cell.selectivity] ?? 0))"
    }
}
