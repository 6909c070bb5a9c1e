import Foundation

/// How a scan-matrix child times its query (ChildMain+ScanMatrix.swift): once, as the first query
/// of a fresh process, or in a warm process, after one untimed run, several times (each after
/// the caches are dropped, for a cold page cache), keeping the median.
struct ScanRuns: Sendable {
    enum Process: String, CaseIterable, Sendable {
        case fresh, warm
    }

    enum Cache: String, CaseIterable, Sendable {
        case warm, cold
    }

    var process: Process
    var cache: Cache
    /// The store, for ``ColdCache/drop(_:allowDropCaches:)``.
    var path: String
    var allowDropCaches: Bool

    /// Timed runs of a warm process: at least ``minimumRuns``, and more while they took less
    /// than ``enoughTime`` in all, up to ``maximumRuns``. A cold page cache takes the minimum.
    static let minimumRuns = 3
    static let maximumRuns = 20
    static let enoughTime = Duration.seconds(1)

    struct Timing: Sendable {
        /// The median time of the timed runs.
        var median: Duration
        /// How many entities each run returned.
        var matches: Int
        var runs: Int
    }

    /// Times `query` (which returns how many entities it found). In a warm process, every run
    /// must find as many as the untimed one.
    func measure(_ query: () async throws -> Int) async throws -> Timing {
        guard process == .warm else {
            let start = ContinuousClock.now
            let matches = try await query()
            return Timing(median: ContinuousClock.now - start, matches: matches, runs: 1)
        }
        let matches = try await query()
        var times: [Duration] = []
        var total = Duration.zero
        while times.count < Self.minimumRuns || (cache == .warm && total < Self.enoughTime && times.count < Self.maximumRuns) {
            if cache == .cold { _ = ColdCache.drop(path, allowDropCaches: allowDropCaches) }
            let start = ContinuousClock.now
            let found = try await query()
            let elapsed = ContinuousClock.now - start
            guard found == matches else { throw BenchError("a warm run found \(found) entities, the first \(matches)") }
            times.append(elapsed)
            total += elapsed
        }
        return Timing(median: times.sorted()[times.count / 2], matches: matches, runs: times.count)
    }
}
