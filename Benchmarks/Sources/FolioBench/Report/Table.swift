import Foundation

/// The result table as text: contender, median, peer, median, the per-round ratio
/// (min/median/max), target, met.
enum Table {
    static func render(_ rows: [Row]) -> String {
        let width = (rows.map { $0.name.count + $0.unit.count + 3 }.max() ?? 44) + 2
        let header =
            Format.pad("measure", width, left: true) + Format.pad("contender", 24, left: true) + Format.pad("median", 11)
            + "  " + Format.pad("peer", 22, left: true) + Format.pad("median", 11)
            + Format.pad("ratio min/med/max", 24) + Format.pad("target", 10) + Format.pad("met", 5)
        var lines = [header, String(repeating: "-", count: header.count)]
        for row in rows {
            let ratios = row.ratios
            let ratioText = ratios.isEmpty ? "" : [ratios.min() ?? .nan, row.medianRatio, ratios.max() ?? .nan].map(Format.ratio).joined(separator: "/")
            let metText = row.met.map { $0 ? "yes" : "NO" } ?? ""
            lines.append(
                Format.pad(row.name + " (" + row.unit + ")", width, left: true)
                    + Format.pad(row.contender, 24, left: true) + Format.pad(Format.value(median(row.values)), 11)
                    + "  " + Format.pad(row.peer ?? "", 22, left: true)
                    + Format.pad(row.peer == nil ? "" : Format.value(median(row.peerValues)), 11)
                    + " " + Format.pad(ratioText, 23) + Format.pad(row.targetText, 10) + Format.pad(metText, 5))
        }
        return lines.joined(separator: "\n")
    }
}
