import Foundation

/// What the chart reads back from a results file (`--json`): the rows, the growth and outbox
/// groups, the scan matrix's cells, the machine, the options and the date. Whatever else the file
/// holds is ignored, and a run without a group simply has no part for it.
struct ChartInput: Decodable {
    struct Matrix: Decodable {
        var cells: [JSONReport.RowResult]
    }

    var machine: [String: String]
    var options: [String: String]
    var date: String?
    var rows: [JSONReport.RowResult]
    var growth: JSONReport.GrowthResult?
    var outbox: JSONReport.OutboxResult?
    var scanMatrix: Matrix?
}
