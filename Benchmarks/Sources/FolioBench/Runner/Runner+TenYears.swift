import Foundation

/// Row 10: the ten-year store (3,650 day files, 100,000 todos by default) against the same rows
/// in SQLite, each measure in a fresh child process (Children/ChildMain+TenYears.swift) on the
/// store seeded once per run. Every child's result is checked against the workload: the same
/// matches, the same todos read, the right todo found.
extension Runner {
    /// The word of the predicate: in about one title in six, never inside another word of the
    /// workload, all lower case (so SQLite's case-blind LIKE and Folio's `contains` agree).
    nonisolated static let scanWord = "milk"

    /// How many todos of the ten-year store the predicate selects, from the workload itself.
    var expectedScanMatches: Int { tenYearStore?.scanMatches ?? 0 }

    /// Opens and scans each store once per engine after seeding, not timed: files a store derives
    /// on first use (indexes) then exist, as in a store in use, and a wrong count stops the run
    /// before the rounds.
    func warmUpDayStores(_ stores: [DayStore]) throws {
        // Folio's field index takes in files that last changed at least two seconds before they
        // were read (FORMAT.md): the seed's newest files must be that old first.
        Thread.sleep(forTimeInterval: 2.2)
        for store in stores {
            _ = try scan("folio", store.folio.path, expected: store.scanMatches)
            _ = try scan("grdb", store.grdb.path, expected: store.scanMatches)
        }
    }

    func runTenYears(_ round: Int, flip: Bool) async throws {
        guard let tenYears else { throw BenchError("the ten-year store was not seeded") }
        let folio = folioTenYears.path
        let grdb = grdbTenYears.path

        // The predicate over every partition / the whole table, the first query of a fresh process,
        // the files in the page cache: the previous round's cold get dropped it, so each store's
        // files are read once first, not timed (before the field index, the scan itself read
        // every file, which warmed the next row; now it reads the index and a part of them).
        ColdCache.warm(folio)
        ColdCache.warm(grdb)
        try await pair(
            flip,
            {
                record(.tenYearScan, try scan("folio", folio, expected: expectedScanMatches))
            },
            {
                recordPeer(.tenYearScan, try scan("grdb", grdb, expected: expectedScanMatches))
            })

        // Every day, one query each, oldest first; then the process's peak memory over its baseline.
        try await pair(
            flip,
            {
                let (time, growth, peak) = try everyDay("folio", folio, tenYears)
                record(.tenYearEveryDay, time)
                record(.tenYearPeakMemory, growth)
                record(.tenYearPeakMemoryTotal, peak)
            },
            {
                let (time, growth, peak) = try everyDay("grdb", grdb, tenYears)
                recordPeer(.tenYearEveryDay, time)
                recordPeer(.tenYearPeakMemory, growth)
                recordPeer(.tenYearPeakMemoryTotal, peak)
            })

        // A cold process: caches dropped, open + one todo by id (a different todo each round);
        // and the floor of Folio's, the duplicate-id guarantee's calls in a cold process of their
        // own, before the pair in even rounds and after it in odd ones.
        var random = SplitMix64(seed: options.seed ^ (0x6E7 &* UInt64(round)))
        let todo = tenYears.todos[random.index(tenYears.todos.count)]
        var calls = Double.nan
        if flip { calls = try idGuaranteeCalls(folio, tenYears) }
        var (folioGet, grdbGet) = (Double.nan, Double.nan)
        try await pair(
            flip,
            {
                folioGet = try coldGet("folio", folio, todo)
            },
            {
                grdbGet = try coldGet("grdb", grdb, todo)
            })
        if !flip { calls = try idGuaranteeCalls(folio, tenYears) }
        record(.tenYearColdGet, folioGet)
        recordPeer(.tenYearColdGet, grdbGet)
        record(.tenYearIdCalls, calls)
        recordPeer(.tenYearIdCalls, grdbGet)
        record(.tenYearColdGetFloor, folioGet)
        recordPeer(.tenYearColdGetFloor, grdbGet + calls)

        // A widget: open + today's todos, the peak memory over the process's baseline.
        try await pair(
            flip,
            {
                record(.widgetMemory, try widget("folio", folio))
            },
            {
                recordPeer(.widgetMemory, try widget("grdb", grdb))
            })
    }

    /// Milliseconds of the predicate query in a fresh child, its count checked against `expected`.
    func scan(_ engine: String, _ path: String, expected: Int) throws -> Double {
        let values = try ChildProcess.numbers(ChildProcess.run(["scan", engine, path, Self.scanWord]), expected: 2)
        guard Int(values[1]) == expected, expected > 0 else {
            throw BenchError("\(engine)'s predicate matched \(Int(values[1])) todos of \(path), expected \(expected)")
        }
        return values[0] / 1e6
    }

    /// Milliseconds of reading every day in a fresh child, the peak memory it added over the
    /// child's baseline and the child's peak memory (MiB).
    private func everyDay(_ engine: String, _ path: String, _ tenYears: Workload) throws -> (Double, Double, Double) {
        let output = try ChildProcess.run(["days", engine, path, tenYears.days[0], String(tenYears.days.count)])
        let values = try ChildProcess.numbers(output, expected: 4)
        guard Int(values[1]) == tenYears.todos.count else {
            throw BenchError("\(engine) read \(Int(values[1])) todos from every day, expected \(tenYears.todos.count)")
        }
        return (values[0] / 1e6, (values[3] - values[2]) / 1024, values[3] / 1024)
    }

    /// Milliseconds of open + get by id in a fresh child, caches dropped first.
    func coldGet(_ engine: String, _ path: String, _ todo: Todo) throws -> Double {
        coldMethod = ColdCache.drop(path, allowDropCaches: options.dropCaches)
        let values = try ChildProcess.numbers(ChildProcess.run(["get", engine, path, todo.id]), expected: 3)
        let day = CivilDay(parsing: todo.date)?.daysSinceEpoch ?? -2
        guard values[1] == 1, Int(values[2]) == day else {
            throw BenchError("\(engine)'s get of \(todo.id) (on \(todo.date)) returned \(values[1] == 1 ? "a todo of another day" : "nothing")")
        }
        return values[0] / 1e6
    }

    /// The peak memory (MiB) a fresh child added by opening the store and reading today's todos.
    private func widget(_ engine: String, _ path: String) throws -> Double {
        let values = try ChildProcess.numbers(ChildProcess.run(["widget", engine, path, tenYearDay]), expected: 3)
        guard Int(values[0]) == tenYearDayTodos, tenYearDayTodos > 0 else {
            throw BenchError("\(engine)'s widget read \(Int(values[0])) todos of \(tenYearDay), expected \(tenYearDayTodos)")
        }
        return (values[2] - values[1]) / 1024
    }
}
