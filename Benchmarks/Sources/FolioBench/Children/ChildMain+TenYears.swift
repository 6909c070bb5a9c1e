import Foundation

/// The child commands of row 10 (Runner+TenYears.swift), each on the shared ten-year store:
///
///     __child scan   folio|grdb PATH WORD         the predicate over every day, prints "nanoseconds matches"
///     __child days   folio|grdb PATH FIRST COUNT  one query per day, prints "nanoseconds todos baseline-kB peak-kB"
///     __child get    folio|grdb PATH ID           open + get by id, prints "nanoseconds found day-number"
///     __child widget folio|grdb PATH DAY          open + one day, prints "todos baseline-kB peak-kB"
///
/// Memory is the process's peak (VmHWM) before opening the store and after the reads, so the
/// difference is what the store added; these children build no workload of their own.
extension ChildMain {
    /// Runs `command` if it is one of row 10's; returns its output line, or nil for another command.
    static func tenYears(_ command: String, engine: String, path: String, _ rest: [String]) async throws -> String? {
        let folio = engine == "folio"
        guard folio || engine == "grdb" else { throw BenchError("unknown engine \(engine)") }
        let folder = URL(fileURLWithPath: path, isDirectory: true)
        switch command {
        case "scan":
            guard rest.count == 1 else { throw BenchError("scan: bad arguments") }
            let (elapsed, count) = folio ? try await FolioContender.scan(folder, word: rest[0]) : try GRDBContender.scan(path, word: rest[0])
            return "\(elapsed.nanoseconds) \(count)"
        case "days":
            guard rest.count == 2, let first = CivilDay(parsing: rest[0]), let count = Int(rest[1]), count > 0 else {
                throw BenchError("days: bad arguments")
            }
            let days = (0..<count).map { CivilDay(daysSinceEpoch: first.daysSinceEpoch + $0).text }
            let baseline = PeakMemory.kilobytes()
            let (elapsed, read) = folio ? try await FolioContender.readEveryDay(folder, days: days) : try GRDBContender.readEveryDay(path, days: days)
            return "\(elapsed.nanoseconds) \(read) \(baseline) \(PeakMemory.kilobytes())"
        case "get":
            guard rest.count == 1 else { throw BenchError("get: bad arguments") }
            let (elapsed, todo) = folio ? try await FolioContender.openAndGet(folder, id: rest[0]) : try GRDBContender.openAndGet(path, id: rest[0])
            let day = todo.flatMap { CivilDay(parsing: $0.date) }?.daysSinceEpoch ?? -1
            return "\(elapsed.nanoseconds) \(todo == nil ? 0 : 1) \(day)"
        case "widget":
            guard rest.count == 1 else { throw BenchError("widget: bad arguments") }
            let baseline = PeakMemory.kilobytes()
            let (count, peak) =
                folio
                ? try await FolioContender.widget(folder, today: rest[0], measure: PeakMemory.kilobytes)
                : try GRDBContender.widget(path, today: rest[0], measure: PeakMemory.kilobytes)
            return "\(count) \(baseline) \(peak)"
        default:
            return nil
        }
    }
}
