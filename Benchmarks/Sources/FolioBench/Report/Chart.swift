import Foundation

/// The benchmark's chart, drawn from a results file (`folio-bench chart RESULTS.json CHART.svg`,
/// or `--chart FILE` at the end of a run): a header naming the run and the machine, then the
/// targets (Chart+Targets.swift: each row's ratio to its peer against its target), the growth
/// with the store's size (Chart+Growth.swift) and with the outbox's length (Chart+Outbox.swift). A
/// part whose rows the run did not measure is left out.
enum Chart {
    static let width = 1040.0
    static let margin = 20.0

    // Colours that stay apart for colour-blind readers (Okabe and Ito).
    static let met = "#009E73"
    static let missed = "#D55E00"
    static let folio = "#0072B2"
    static let grdb = "#E69F00"
    /// GRDB's orange, darker, for text on white.
    static let grdbText = "#9A6700"
    static let ink = "#222222"
    static let muted = "#666666"
    static let rule = "#dddddd"

    static func write(json: URL, to chart: URL) throws {
        try write(report: Data(contentsOf: json), to: chart)
    }

    static func write(report: Data, to chart: URL) throws {
        let input = try JSONDecoder().decode(ChartInput.self, from: report)
        try Data(render(input).utf8).write(to: chart)
    }

    static func render(_ input: ChartInput) -> String {
        var svg = SVG()
        var bottom = header(&svg, input)
        if let end = targets(&svg, input, top: bottom + 28) { bottom = end }
        if let end = growth(&svg, input, top: bottom + 36) { bottom = end }
        if let end = outbox(&svg, input, top: bottom + 36) { bottom = end }
        svg.text(
            "Drawn by folio-bench chart from the run's JSON. BENCHMARKS.md says what each row measures.", margin, bottom + 30,
            size: 11, fill: muted)
        return svg.document(width: width, height: bottom + 44)
    }

    /// The title and the run's lines; returns the y below them.
    private static func header(_ svg: inout SVG, _ input: ChartInput) -> Double {
        let options = input.options
        let machine = input.machine
        let day = input.date.map { String($0.prefix(10)) } ?? "undated"
        svg.text("Folio next to SQLite (GRDB): one run of folio-bench, \(day)", margin, 30, size: 18, bold: true)
        let rounds = options["rounds"].map { "\($0) rounds" } ?? "rounds unknown"
        let quick = options["quick"] == "true" ? ", --quick (smaller workload)" : ""
        svg.text(
            "\(rounds)\(quick), \(machine["build"] ?? "?") build · \(machine["cpu"] ?? "?"), \(machine["cores"] ?? "?") cores, "
                + "\(machine["memory"] ?? "?") · \(machine["os"] ?? "?")", margin, 52, size: 12, fill: muted)
        svg.text(
            "Each ratio is Folio's value over its peer's in the same round, run one after the other on the same machine.",
            margin, 70, size: 12, fill: muted)
        return 70
    }

    /// A panel's title and its line of explanation.
    static func title(_ svg: inout SVG, _ title: String, _ explanation: String, top: Double) {
        svg.text(title, margin, top, size: 15, bold: true)
        svg.text(explanation, margin, top + 18, size: 12, fill: muted)
    }
}
