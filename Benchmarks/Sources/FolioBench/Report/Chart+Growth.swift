import Foundation

/// The chart's second panel: a small plot per growth measure, the median of the rounds (log scale)
/// against the store's size (evenly spaced), Folio and SQLite side by side, each point labelled,
/// and under each plot how much each engine's cost grew from the smallest store to the largest.
extension Chart {
    private static let plotHeight = 140.0
    private static let gap = 14.0

    /// Draws the panel below `top`; returns the y below it, or nil when the run has no growth rows.
    static func growth(_ svg: inout SVG, _ input: ChartInput, top: Double) -> Double? {
        guard let growth = input.growth, !growth.points.isEmpty else { return nil }
        let stores = growth.stores.sorted { $0.days < $1.days }
        guard let smallest = stores.first else { return nil }
        let density = Double(smallest.todos) / Double(smallest.days)
        title(
            &svg, "How costs grow with the store's size",
            "Day files of about \(Int(density.rounded())) todos each: "
                + stores.map { "\(Row.span(days: $0.days)) = \(grouped($0.days)) files, \(grouped($0.todos)) todos" }.joined(separator: "; ") + ".",
            top: top)
        svg.text(
            "The same work at every size (the same commits, reads, one get, one query); median of the rounds, log scale; "
                + "×: the largest store's value over the smallest's.", margin, top + 34,
            size: 12, fill: muted)
        let legendY = top + 54
        svg.line(margin, legendY, margin + 24, legendY, stroke: folio, width: 2.5)
        svg.circle(margin + 12, legendY, radius: 3.5, fill: folio)
        svg.text("Folio", margin + 30, legendY + 4, size: 11, fill: ink)
        svg.line(margin + 80, legendY, margin + 104, legendY, stroke: grdb, width: 2.5, dash: "6 3")
        svg.circle(margin + 92, legendY, radius: 3.5, fill: grdb)
        svg.text("SQLite through GRDB, the same rows", margin + 110, legendY + 4, size: 11, fill: ink)

        let measures = Growth.Measure.allCases.filter { measure in growth.points.contains { $0.measure == measure.rawValue } }
        let cellWidth = (width - 2 * margin) / Double(max(measures.count, 1))
        let plotTop = top + 114
        for (index, measure) in measures.enumerated() {
            let points = growth.points.filter { $0.measure == measure.rawValue }.sorted { $0.days < $1.days }
            let left = margin + cellWidth * Double(index)
            plot(&svg, measure, points, left: left + 44, right: left + cellWidth - gap, top: plotTop, sizes: stores.map(\.days))
        }
        return plotTop + plotHeight + 82
    }

    private static func plot(
        _ svg: inout SVG, _ measure: Growth.Measure, _ points: [JSONReport.GrowthResult.Point], left: Double, right: Double, top: Double,
        sizes: [Int]
    ) {
        let bottom = top + plotHeight
        svg.text(measure.title, left - 40, top - 30, size: 12, bold: true)
        svg.text(measure.unitText, left - 40, top - 15, size: 10.5, fill: muted)
        let folioValues = points.map { $0.row.median ?? .nan }
        let grdbValues = points.map { $0.row.peerMedian ?? .nan }
        let values = (folioValues + grdbValues).filter(\.isFinite)
        let y = LogScale(covering: values.map { $0 / 1.2 } + values.map { $0 * 1.2 }, start: bottom, end: top)
        // The sizes evenly spaced, smallest first (1, 10 and 30 years on a log axis would crowd the last two).
        func x(_ days: Int) -> Double {
            guard sizes.count > 1, let index = sizes.firstIndex(of: days) else { return (left + right) / 2 }
            return left + 18 + Double(index) / Double(sizes.count - 1) * (right - left - 36)
        }
        for tick in y.ticks {
            svg.line(left, y.position(tick), right, y.position(tick), stroke: rule)
            svg.text(LogScale.label(tick), left - 5, y.position(tick) + 4, size: 10, anchor: .end, fill: muted)
        }
        svg.line(left, bottom, right, bottom, stroke: "#999999")
        for point in points {
            svg.text(sizeLabel(point.days, sizes), x(point.days), bottom + 14, size: 10.5, anchor: .middle, fill: muted)
        }
        for (values, colour, dash) in [(grdbValues, grdb, "6 3"), (folioValues, folio, nil)] {
            let placed = zip(points, values).filter { $0.1.isFinite }.map { (x: x($0.0.days), y: y.position($0.1)) }
            svg.polyline(placed, stroke: colour, width: 2.5, dash: dash)
            for point in placed { svg.circle(point.x, point.y, radius: 3.5, fill: colour) }
        }
        // The values under the plot, a column per size, and how much each grew from the first to the last.
        let columns = points.map(\.days)
        let step = (right - left + 4) / Double(columns.count + (columns.count > 1 ? 1 : 0))
        func column(_ index: Int) -> Double { left - 4 + step * Double(index + 1) }
        let header = bottom + 36
        for (index, days) in columns.enumerated() {
            svg.text(sizeLabel(days, sizes), column(index), header, size: 10, anchor: .end, fill: muted)
        }
        if columns.count > 1 { svg.text("×", column(columns.count), header, size: 10, anchor: .end, fill: muted) }
        for (line, (name, values, colour)) in [("Folio", folioValues, folio), ("GRDB", grdbValues, grdbText)].enumerated() {
            let baseline = header + 15 * Double(line + 1)
            svg.text(name, left - 40, baseline, size: 10.5, bold: true, fill: colour)
            for (index, value) in values.enumerated() {
                svg.text(compact(value), column(index), baseline, size: 10.5, anchor: .end, fill: colour)
            }
            if columns.count > 1, let growth = factor(values.first, values.last) {
                svg.text(growth, column(columns.count), baseline, size: 10.5, anchor: .end, bold: true, fill: colour)
            }
        }
    }

    /// A size on the plot's axis and over its values: years when every size is whole years.
    private static func sizeLabel(_ days: Int, _ sizes: [Int]) -> String {
        sizes.allSatisfy { $0 % 365 == 0 } ? "\(days / 365) y" : "\(days) d"
    }

    /// A value in three or four characters: "3493", "114", "23.5", "4.24".
    private static func compact(_ value: Double) -> String {
        guard value.isFinite else { return "—" }
        return String(format: value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f", value)
    }

    private static func factor(_ from: Double?, _ to: Double?) -> String? {
        guard let from, let to, from > 0 else { return nil }
        return String(format: to / from >= 10 ? "%.0f" : "%.1f", to / from)
    }

    private static func grouped(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
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
