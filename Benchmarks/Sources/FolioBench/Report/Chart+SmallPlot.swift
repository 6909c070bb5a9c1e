import Foundation

/// A small plot of the chart's growth panels (Chart+Growth.swift, Chart+Outbox.swift): Folio's and
/// SQLite's medians at each point of an axis (the store's size, the outbox's length), log scale,
/// each engine a line, and under the plot the values, a column per point, and how much each
/// engine's cost grew from the first point to the last.
extension Chart {
    static let plotHeight = 140.0
    static let plotGap = 14.0

    struct SmallPlot {
        var title: String
        var unitText: String
        /// Each point's label (under the axis and over its values).
        var labels: [String]
        /// Where each point sits across the plot, from 0 to 1.
        var positions: [Double]
        var folio: [Double]
        /// SQLite's values (NaN where it has none; no line at all when it has none anywhere).
        var grdb: [Double]
        /// A line under the values (the target and whether it is met), and its colour.
        var note: (text: String, colour: String)?
        /// The points whose values are listed under the plot (nil: all of them).
        var listed: [Int]?

        /// Points evenly spaced (a single one in the middle).
        static func evenly(_ count: Int) -> [Double] {
            count > 1 ? (0..<count).map { Double($0) / Double(count - 1) } : [0.5]
        }
    }

    /// The two engines' line styles and names, at `y`.
    static func engineLegend(_ svg: inout SVG, y: Double) {
        svg.line(margin, y, margin + 24, y, stroke: folio, width: 2.5)
        svg.circle(margin + 12, y, radius: 3.5, fill: folio)
        svg.text("Folio", margin + 30, y + 4, size: 11, fill: ink)
        svg.line(margin + 80, y, margin + 104, y, stroke: grdb, width: 2.5, dash: "6 3")
        svg.circle(margin + 92, y, radius: 3.5, fill: grdb)
        svg.text("SQLite through GRDB, the same rows", margin + 110, y + 4, size: 11, fill: ink)
    }

    /// Draws `plot` between `left` and `right`, its axis from `top` down (the title above `top`).
    static func draw(_ svg: inout SVG, _ plot: SmallPlot, left: Double, right: Double, top: Double) {
        let bottom = top + plotHeight
        svg.text(plot.title, left - 40, top - 30, size: 12, bold: true)
        svg.text(plot.unitText, left - 40, top - 15, size: 10.5, fill: muted)
        let hasGRDB = plot.grdb.contains { $0.isFinite }
        let values = (plot.folio + plot.grdb).filter(\.isFinite)
        let y = LogScale(covering: values.map { $0 / 1.2 } + values.map { $0 * 1.2 }, start: bottom, end: top)
        func x(_ index: Int) -> Double { left + 18 + plot.positions[index] * (right - left - 36) }
        for tick in y.ticks {
            svg.line(left, y.position(tick), right, y.position(tick), stroke: rule)
            svg.text(LogScale.label(tick), left - 5, y.position(tick) + 4, size: 10, anchor: .end, fill: muted)
        }
        svg.line(left, bottom, right, bottom, stroke: "#999999")
        for (index, label) in plot.labels.enumerated() {
            svg.text(label, x(index), bottom + 14, size: 10.5, anchor: .middle, fill: muted)
        }
        for (values, colour, dash) in [(plot.grdb, grdb, "6 3"), (plot.folio, folio, nil)] where values.contains(where: \.isFinite) {
            let placed = values.indices.filter { values[$0].isFinite }.map { (x: x($0), y: y.position(values[$0])) }
            svg.polyline(placed, stroke: colour, width: 2.5, dash: dash)
            for point in placed { svg.circle(point.x, point.y, radius: 3.5, fill: colour) }
        }
        // The values under the plot, a column per point listed, and how much each grew from the
        // first point to the last.
        let listed = plot.listed ?? Array(plot.labels.indices)
        let count = listed.count
        let step = (right - left + 4) / Double(count + (plot.labels.count > 1 ? 1 : 0))
        func column(_ index: Int) -> Double { left - 4 + step * Double(index + 1) }
        let header = bottom + 36
        for (place, index) in listed.enumerated() {
            svg.text(plot.labels[index], column(place), header, size: 10, anchor: .end, fill: muted)
        }
        if plot.labels.count > 1 { svg.text("×", column(count), header, size: 10, anchor: .end, fill: muted) }
        let lines = [("Folio", plot.folio, folio)] + (hasGRDB ? [("GRDB", plot.grdb, grdbText)] : [])
        for (line, (name, values, colour)) in lines.enumerated() {
            let baseline = header + 15 * Double(line + 1)
            svg.text(name, left - 40, baseline, size: 10.5, bold: true, fill: colour)
            for (place, index) in listed.enumerated() {
                svg.text(compact(values[index]), column(place), baseline, size: 10.5, anchor: .end, fill: colour)
            }
            if plot.labels.count > 1, let growth = factor(values.first, values.last) {
                svg.text(growth, column(count), baseline, size: 10.5, anchor: .end, bold: true, fill: colour)
            }
        }
        if let note = plot.note {
            svg.text(note.text, left - 40, header + 15 * Double(lines.count + 1), size: 10.5, bold: true, fill: note.colour)
        }
    }

    /// A value in three or four characters: "3493", "114", "23.5", "4.24".
    static func compact(_ value: Double) -> String {
        guard value.isFinite else { return "—" }
        return String(format: value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f", value)
    }

    private static func factor(_ from: Double?, _ to: Double?) -> String? {
        guard let from, let to, from > 0, from.isFinite, to.isFinite else { return nil }
        return String(format: to / from >= 10 ? "%.0f" : "%.1f", to / from)
    }
}
