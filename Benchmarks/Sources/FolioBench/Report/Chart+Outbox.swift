import Foundation

/// The chart's third panel: a small plot per outbox measure (Chart+SmallPlot.swift), the median of
/// the rounds (log scale) against the outbox's length (log scale), Folio next to SQLite (the
/// `folio` tool alone), how much each grew from the shortest outbox to the longest, and the
/// measure's target, met or missed.
extension Chart {
    private static let perLine = 5

    /// Draws the panel below `top`; returns the y below it, or nil when the run has no outbox rows.
    static func outbox(_ svg: inout SVG, _ input: ChartInput, top: Double) -> Double? {
        guard let outbox = input.outbox, !outbox.points.isEmpty else { return nil }
        let lengths = outbox.stores.map(\.length).sorted()
        guard let shortest = lengths.first, let longest = lengths.last, longest > shortest else { return nil }
        title(
            &svg, "How costs grow with the outbox's length",
            "Every store: the same \(Format.count(outbox.todos)) todos and \(Format.count(outbox.drafts)) drafts in "
                + "\(Format.count(outbox.days)) day files each; pending commands: " + lengths.map(Format.count).joined(separator: ", ")
                + ".", top: top)
        svg.text(
            "Half of them drafts, which coalesce; no server. Median of the rounds, log scales; ×: the longest outbox's value "
                + "over the shortest's (values: those two).",
            margin, top + 34, size: 12, fill: muted)
        svg.text(
            "Targets: Folio's at \(Format.count(longest)) at most 1.2× itself at \(Format.count(shortest)) (the median of the rounds' "
                + "ratios); the folio tool's commands under 1 s.", margin, top + 50, size: 12, fill: muted)
        engineLegend(&svg, y: top + 70)

        let measures = OutboxAxis.Measure.allCases.filter { measure in outbox.points.contains { $0.measure == measure.rawValue } }
        let cellWidth = (width - 2 * margin) / Double(perLine)
        let lineHeight = plotHeight + 150
        let span = log10(Double(longest)) - log10(Double(shortest))
        for (index, measure) in measures.enumerated() {
            let points = outbox.points.filter { $0.measure == measure.rawValue }
            func value(_ length: Int, _ side: KeyPath<JSONReport.RowResult, Double?>) -> Double {
                points.first { $0.length == length }?.row[keyPath: side] ?? .nan
            }
            let plot = SmallPlot(
                title: measure.title, unitText: measure.unitText, labels: lengths.map(lengthLabel),
                positions: lengths.map { (log10(Double($0)) - log10(Double(shortest))) / span },
                folio: lengths.map { value($0, \.median) }, grdb: lengths.map { value($0, \.peerMedian) },
                note: target(measure, input.rows), listed: [0, lengths.count - 1])
            let left = margin + cellWidth * Double(index % perLine)
            let plotTop = top + 130 + lineHeight * Double(index / perLine)
            draw(&svg, plot, left: left + 44, right: left + cellWidth - plotGap, top: plotTop)
        }
        let lines = (measures.count + perLine - 1) / perLine
        return top + 130 + lineHeight * Double(lines - 1) + plotHeight + 97
    }

    /// "10", "500", "5k", "50k".
    private static func lengthLabel(_ length: Int) -> String {
        length >= 1000 && length % 1000 == 0 ? "\(length / 1000)k" : "\(length)"
    }

    /// The measure's target row, as a line under its plot: what it measured and whether it met it.
    private static func target(_ measure: OutboxAxis.Measure, _ rows: [JSONReport.RowResult]) -> (text: String, colour: String)? {
        guard let row = rows.first(where: { $0.key == "\(measure.targetKey)" }), let met = row.met, let bound = row.target else { return nil }
        let verdict = met ? "met" : "missed"
        guard row.targetKind != "value" else {
            // The tool's: "target ≤ 1 s: 10.3 s, missed".
            let seconds = (row.targetValue ?? 1000) / 1000
            let value = row.median.map { $0 >= 1000 ? String(format: "%.1f s", $0 / 1000) : "\(compact($0)) ms" } ?? "—"
            return ("target ≤ \(String(format: "%g", seconds)) s: \(value), \(verdict)", met ? Chart.met : missed)
        }
        return ("target \(bound): \(row.medianRatio.map(Format.ratio) ?? "—"), \(verdict)", met ? Chart.met : missed)
    }
}

extension OutboxAxis.Measure {
    /// What a value of the chart's plot is.
    var unitText: String {
        switch self {
        case .coldOpen: return "ms, fresh process, caches dropped"
        case .readDay: return "µs per query, open store"
        case .statusWarm: return "µs per call, open store"
        case .statusFresh: return "ms, first call, fresh process"
        case .commitWarm, .coalescedWarm: return "µs per commit, open store"
        case .commitFresh, .coalescedFresh: return "ms, open + one commit"
        case .cliStatus, .cliList: return "ms, a process, files cached"
        }
    }
}
