import Foundation

/// The chart's first panel: a band per row that has a target, Folio's ratio to its peer on a log
/// axis (a bar from parity to the median of the rounds, a whisker over the rounds' range), a line
/// at the target, the side of the target that meets it shaded, met and missed in two colours; then
/// a band per scan-matrix shape with a dot per cell (Folio with every accelerator).
extension Chart {
    private static let labelLeft = margin
    private static let plotLeft = 450.0
    private static let plotRight = 800.0
    private static let valueLeft = 815.0
    private static let band = 36.0

    /// One band of the panel.
    private struct Band {
        var name: String
        var detail: String
        /// The rounds' ratios (a whisker around the bar), or the cells' (dots, no bar).
        var ratios: [Double]
        var median: Double?
        /// Where the target line is, on the ratio axis.
        var target: Double
        var higherIsBetter: Bool
        var met: Bool
        var value: String
        var targetText: String
    }

    /// Draws the panel below `top`; returns the y below it, or nil when no row has a target.
    static func targets(_ svg: inout SVG, _ input: ChartInput, top: Double) -> Double? {
        let bands = input.rows.compactMap(band) + matrixBands(input.scanMatrix?.cells ?? [])
        guard !bands.isEmpty else { return nil }
        let metCount = input.rows.filter { $0.met == true }.count
        let targetCount = input.rows.filter { $0.met != nil }.count
        title(
            &svg, "Targets: \(metCount) of \(targetCount) rows met",
            "Folio ÷ its peer in the same round, log scale. Bar: from parity (1×) to the median of the rounds; whisker: the rounds' range.",
            top: top)
        // The folio tool's rows (the outbox group) have the same command with the shortest outbox as their peer.
        let otherPeers = input.rows.contains { $0.targetKind == "value" && $0.peer?.hasPrefix("GRDB") == false }
        svg.text(
            otherPeers
                ? "A row whose target is a value (syncs, MiB, the folio tool's ms) shows its ratio to its peer, and the target divided by the peer's value."
                : "A row whose target is a value (syncs, MiB) shows its ratio to GRDB, and the target divided by GRDB's value.",
            margin, top + 34, size: 12, fill: muted)
        var notes = top + 34
        if input.rows.contains(where: { $0.targetKind == "aboveFloor" && $0.met != nil }) {
            notes += 16
            svg.text(
                "A row whose target is a margin over a floor measured in the same run (switches) shows its ratio to the floor, and the floor plus the margin divided by the floor.",
                margin, notes, size: 12, fill: muted)
        }
        legend(&svg, top: notes + 20)
        let first = notes + 34
        let scale = LogScale(
            covering: bands.flatMap { $0.ratios + [$0.target, $0.median ?? 1] } + [1], start: plotLeft, end: plotRight)
        let last = first + band * Double(bands.count)
        for tick in scale.ticks {
            let x = scale.position(tick)
            svg.line(x, first, x, last, stroke: tick == 1 ? "#999999" : rule, width: tick == 1 ? 1.2 : 1, dash: tick == 1 ? "4 3" : nil)
            svg.text(LogScale.label(tick) + "×", x, last + 15, size: 11, anchor: .middle, fill: muted)
        }
        svg.text("Folio ÷ peer (log scale)", (plotLeft + plotRight) / 2, last + 31, size: 11, anchor: .middle, fill: muted)
        for (index, band) in bands.enumerated() {
            draw(&svg, band, top: first + Self.band * Double(index), scale: scale, shaded: index % 2 == 0)
        }
        return last + 31
    }

    private static func legend(_ svg: inout SVG, top: Double) {
        var x = margin
        func item(_ label: String, _ swatch: (inout SVG, Double) -> Void) {
            swatch(&svg, x)
            svg.text(label, x + 22, top + 4, size: 11, fill: muted)
            x += 22 + Double(label.count) * 5.8 + 18
        }
        item("met") { svg, x in svg.rect(x: x, y: top - 4, width: 16, height: 10, fill: met) }
        item("missed") { svg, x in svg.rect(x: x, y: top - 4, width: 16, height: 10, fill: missed) }
        item("target") { svg, x in svg.line(x + 8, top - 7, x + 8, top + 8, stroke: ink, width: 2) }
        item("the side of the target that meets it") { svg, x in svg.rect(x: x, y: top - 7, width: 16, height: 15, fill: met, opacity: 0.15) }
        item("one scan-matrix cell") { svg, x in svg.circle(x + 8, top + 1, radius: 4, fill: met) }
    }

    private static func draw(_ svg: inout SVG, _ band: Band, top: Double, scale: LogScale, shaded: Bool) {
        if shaded { svg.rect(x: margin - 6, y: top, width: width - 2 * margin + 12, height: Self.band, fill: "#f6f6f6") }
        let middle = top + Self.band / 2
        let colour = band.met ? met : missed
        svg.text(band.name, labelLeft, top + 15, size: 12)
        svg.text(band.detail, labelLeft, top + 29, size: 10.5, fill: muted)
        // The side of the target that meets it.
        let target = scale.position(band.target)
        let good = band.higherIsBetter ? (target, plotRight) : (plotLeft, target)
        svg.rect(x: good.0, y: top + 3, width: good.1 - good.0, height: Self.band - 6, fill: met, opacity: 0.15)
        if let median = band.median {
            let (from, to) = (scale.position(1), scale.position(median))
            svg.rect(x: min(from, to), y: middle - 6, width: max(abs(to - from), 2), height: 12, fill: colour)
            if let low = band.ratios.min(), let high = band.ratios.max(), high > low {
                let (left, right) = (scale.position(low), scale.position(high))
                svg.line(left, middle, right, middle, stroke: ink, width: 1.2)
                svg.line(left, middle - 4, left, middle + 4, stroke: ink, width: 1.2)
                svg.line(right, middle - 4, right, middle + 4, stroke: ink, width: 1.2)
            }
        } else {
            for ratio in band.ratios {
                let cellMet = band.higherIsBetter ? ratio >= band.target : ratio <= band.target
                svg.circle(scale.position(ratio), middle, radius: 4, fill: cellMet ? met : missed, stroke: "#ffffff", opacity: 0.85)
            }
        }
        svg.line(target, top + 3, target, top + Self.band - 3, stroke: ink, width: 2)
        svg.text(band.value, valueLeft, top + 15, size: 12, bold: true, fill: colour)
        svg.text(band.targetText, valueLeft, top + 29, size: 10.5, fill: muted)
    }

    /// The band of a row with a target, or nil.
    private static func band(_ row: JSONReport.RowResult) -> Band? {
        guard let target = row.targetValue, let met = row.met, let ratio = row.medianRatio, let peer = row.peer else { return nil }
        let higher = row.direction == "higherIsBetter"
        let sense = "\(row.unit), \(higher ? "higher" : "lower") is better"
        let bound = higher ? "≥" : "≤"
        let verdict = met ? "met" : "missed"
        if row.targetKind == "aboveFloor" {
            guard let value = row.median, let floor = row.peerMedian, floor > 0 else { return nil }
            return Band(
                name: row.measure, detail: "\(row.contender) ÷ \(peer) (\(sense))", ratios: row.ratios, median: ratio,
                target: (floor + target) / floor, higherIsBetter: higher, met: met,
                value: "\(Format.value(value)) \(row.unit) \(verdict)",
                targetText: "target \(bound) floor \(Format.value(floor)) + \(String(format: "%g", target))")
        }
        if row.targetKind == "value" {
            guard let value = row.median, let peerValue = row.peerMedian, peerValue > 0 else { return nil }
            return Band(
                name: row.measure, detail: "\(row.contender) ÷ \(peer) (\(sense))", ratios: row.ratios, median: ratio,
                target: target / peerValue, higherIsBetter: higher, met: met, value: "\(Format.value(value)) \(row.unit) \(verdict)",
                targetText: "target \(bound) \(String(format: "%g", target)) \(row.unit); \(Format.ratio(ratio)) \(peer.hasPrefix("GRDB") ? "GRDB" : peer)")
        }
        return Band(
            name: row.measure, detail: "\(row.contender) ÷ \(peer) (\(sense))", ratios: row.ratios, median: ratio,
            target: target, higherIsBetter: higher, met: met, value: "\(Format.ratio(ratio)) \(verdict)",
            targetText: "target \(bound) \(Format.ratio(target))")
    }

    /// A band per scan-matrix shape: each cell's median ratio of Folio with every accelerator.
    private static func matrixBands(_ cells: [JSONReport.RowResult]) -> [Band] {
        let all = cells.filter { $0.key.hasSuffix(".\(ScanContender.all.rawValue)") && $0.medianRatio != nil }
        return ScanShape.allCases.compactMap { shape in
            let mine = all.filter { $0.key.hasPrefix("scanMatrix.\(shape.rawValue).") }
            guard let target = mine.first?.targetValue else { return nil }
            let ratios = mine.compactMap(\.medianRatio)
            let metCount = mine.filter { $0.met == true }.count
            return Band(
                name: "scan matrix, \(shape.rawValue) todos: Folio with every accelerator",
                detail: "a dot per cell: share selected, process, page cache (ms)", ratios: ratios,
                median: nil, target: target, higherIsBetter: false, met: metCount == mine.count,
                value: "\(metCount) of \(mine.count) cells met", targetText: "target ≤ \(Format.ratio(target)) in each")
        }
    }
}
