import Foundation

/// The chart's second panel: a small plot per growth measure (Chart+SmallPlot.swift), the median
/// of the rounds (log scale) against the store's size (evenly spaced), Folio and SQLite side by
/// side, each point labelled, and under each plot how much each engine's cost grew from the
/// smallest store to the largest.
extension Chart {
    /// Draws the panel below `top`; returns the y below it, or nil when the run has no growth rows.
    static func growth(_ svg: inout SVG, _ input: ChartInput, top: Double) -> Double? {
        guard let growth = input.growth, !growth.points.isEmpty else { return nil }
        let stores = growth.stores.sorted { $0.days < $1.days }
        guard let smallest = stores.first else { return nil }
        let density = Double(smallest.todos) / Double(smallest.days)
        title(
            &svg, "How costs grow with the store's size",
            "Day files of about \(Int(density.rounded())) todos each: "
                + stores.map { "\(Row.span(days: $0.days)) = \(Format.count($0.days)) files, \(Format.count($0.todos)) todos" }.joined(separator: "; ") + ".",
            top: top)
        svg.text(
            "The same work at every size (the same commits, reads, one get, one query); median of the rounds, log scale; "
                + "×: the largest store's value over the smallest's.", margin, top + 34,
            size: 12, fill: muted)
        engineLegend(&svg, y: top + 54)

        let measures = Growth.Measure.allCases.filter { measure in growth.points.contains { $0.measure == measure.rawValue } }
        let cellWidth = (width - 2 * margin) / Double(max(measures.count, 1))
        let plotTop = top + 114
        let sizes = stores.map(\.days)
        for (index, measure) in measures.enumerated() {
            let points = growth.points.filter { $0.measure == measure.rawValue }
            func value(_ days: Int, _ side: KeyPath<JSONReport.RowResult, Double?>) -> Double {
                points.first { $0.days == days }?.row[keyPath: side] ?? .nan
            }
            let plot = SmallPlot(
                title: measure.title, unitText: measure.unitText, labels: sizes.map { sizeLabel($0, sizes) },
                positions: SmallPlot.evenly(sizes.count), folio: sizes.map { value($0, \.median) },
                grdb: sizes.map { value($0, \.peerMedian) })
            let left = margin + cellWidth * Double(index)
            draw(&svg, plot, left: left + 44, right: left + cellWidth - plotGap, top: plotTop)
        }
        return plotTop + plotHeight + 82
    }

    /// A size on the plot's axis and over its values: years when every size is whole years.
    private static func sizeLabel(_ days: Int, _ sizes: [Int]) -> String {
        sizes.allSatisfy { $0 % 365 == 0 } ? "\(days / 365) y" : "\(days) d"
    }
}

extension Growth.Measure {
    /// What a value of the chart's plot is.
    var unitText: String {
        switch self {
        case .commit: return "µs per commit, on a copy in use"
        case .coldOpen: return "ms, fresh process, caches dropped"
        case .readDay: return "µs per query, open store"
        case .getByID: return "ms, fresh process, caches dropped"
        case .scan: return "ms, first query, files cached"
        }
    }
}
