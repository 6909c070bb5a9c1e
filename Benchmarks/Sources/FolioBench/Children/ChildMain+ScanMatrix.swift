import Foundation

/// The child command of the scan matrix (Runner+ScanMatrix.swift), on a shape's store seeded once:
///
///     __child matrix folio|grdb PATH narrow|wide 0.1%|1%|10%|50% fresh|warm warm|cold drop|fadvise
///
/// opens the store (not timed) and times the selectivity's predicate as ``ScanRuns`` says; prints
/// "median-nanoseconds matches runs". Folio's accelerators are those the parent left on in this
/// process's `FOLIO_SCAN_WITHOUT`. The last argument says how a warm process makes its page cache
/// cold (`drop`: drop_caches when allowed; `fadvise`: never).
extension ChildMain {
    static func scanMatrix(engine: String, path: String, _ rest: [String]) async throws -> String {
        guard rest.count == 5, let shape = ScanShape(rawValue: rest[0]), let selectivity = ScanSelectivity(rawValue: rest[1]),
            let process = ScanRuns.Process(rawValue: rest[2]), let cache = ScanRuns.Cache(rawValue: rest[3])
        else {
            throw BenchError("matrix: bad arguments \(rest)")
        }
        let runs = ScanRuns(process: process, cache: cache, path: path, allowDropCaches: rest[4] == "drop")
        let timing: ScanRuns.Timing
        switch engine {
        case "folio":
            timing = try await FolioContender.matrixScan(
                URL(fileURLWithPath: path, isDirectory: true), shape: shape,
                selectivity: selectivity, runs: runs)
        case "grdb":
            timing = try await GRDBContender.matrixScan(path, shape: shape, selectivity: selectivity, runs: runs)
        default:
            throw BenchError("unknown engine \(engine)")
        }
        return "\(timing.median.nanoseconds) \(timing.matches) \(timing.runs)"
    }
}
