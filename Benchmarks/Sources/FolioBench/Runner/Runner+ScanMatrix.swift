import Foundation

/// The scan matrix (`--only scanmatrix`): what each of Folio's scan accelerators pays in a
/// predicate scan over ten years of day files, by entity shape, share of entities selected,
/// process (fresh or warm) and page cache (warm or cold), next to SQLite holding the same rows.
/// Every run is a child process (Children/ChildMain+ScanMatrix.swift), since Folio reads
/// `FOLIO_SCAN_WITHOUT` once per process; every child's count is checked against the workload.
extension Runner {
    /// Seeds each shape's Folio store and SQLite database with the same entities (the ten-year
    /// store's days and density), then runs every contender on every predicate once, not timed:
    /// the counts are checked before the rounds, and the first query (Folio with every
    /// accelerator) leaves the field index saved (by the query or when its child closes the
    /// store), which the timed runs then find current.
    func prepareScanMatrix() async throws {
        let perDay = Double(options.todos) / 365
        let workload = ScanWorkload(
            seed: options.seed ^ 0x5CA7, count: Int(perDay * Double(options.tenYearDays)),
            dayCount: options.tenYearDays)
        for shape in ScanShape.allCases {
            let folio = scratch.appendingPathComponent("matrix-\(shape.rawValue)-folio", isDirectory: true)
            let grdb = scratch.appendingPathComponent("matrix-\(shape.rawValue).sqlite")
            let matches: [ScanSelectivity: Int]
            switch shape {
            case .narrow:
                let entities = workload.narrow
                try await FolioContender.seed(folio, entities: entities)
                try GRDBContender.seed(grdb.path, records: entities, schema: shape.schema)
                matches = try Self.counts(entities, NarrowTodo.predicate)
            case .wide:
                try await FolioContender.seed(folio, entities: workload.wide)
                try GRDBContender.seed(grdb.path, records: workload.wide, schema: shape.schema)
                matches = try Self.counts(workload.wide, WideTodo.predicate)
            }
            try GRDBContender.analyze(grdb.path)
            scanMatrix.stores[shape] = ScanMatrix.Store(
                shape: shape, folio: folio, grdb: grdb, days: workload.days.count,
                entities: workload.wide.count, matches: matches,
                plans: try GRDBContender.plans(grdb.path, shape: shape))
        }
        // Folio's field index takes in files that last changed at least two seconds before they
        // were read (FORMAT.md): the seed's newest files must be that old first.
        try await Task.sleep(for: .seconds(2.2))
        let warmUp = ScanMatrix.cells.filter { $0.process == .fresh && $0.cache == .warm }
        for contender in ScanContender.allCases {
            for cell in warmUp {
                guard let store = scanMatrix.stores[cell.shape] else { continue }
                _ = try matrixRun(contender, store, cell)
                if contender == .all, scanMatrix.stores[cell.shape]?.index == nil {
                    guard let stamp = ScanMatrix.FileStamp(store.fieldIndex) else {
                        throw BenchError("Folio's first \(cell.shape.rawValue) scan left no field index at \(store.fieldIndex.path)")
                    }
                    scanMatrix.stores[cell.shape]?.index = stamp
                }
            }
        }
        try checkFieldIndexes(after: "the warm-up")
        for shape in ScanShape.allCases { scanMatrix.stores[shape]?.measureSizes() }
    }

    /// One round: every cell, each contender in turn (the order rotated round by round), the
    /// page cache made warm (every file read once) before a warm cell and cold (dropped) before
    /// each contender of a cold one.
    func runScanMatrix(_ round: Int) throws {
        let contenders = ScanContender.allCases
        let shift = (round - 1) % contenders.count
        let order = Array(contenders[shift...] + contenders[..<shift])
        for cell in ScanMatrix.cells {
            guard let store = scanMatrix.stores[cell.shape] else { throw BenchError("the scan matrix was not seeded") }
            if cell.cache == .warm {
                ColdCache.warm(store.folio.path)
                ColdCache.warm(store.grdb.path)
            }
            var values: [ScanContender: Double] = [:]
            for contender in order { values[contender] = try matrixRun(contender, store, cell) }
            scanMatrix.record(cell, values)
        }
        try checkFieldIndexes(after: "round \(round)")
    }

    /// Milliseconds of `contender` in `cell`, in a child of its own, its count checked.
    private func matrixRun(_ contender: ScanContender, _ store: ScanMatrix.Store, _ cell: ScanMatrix.Cell) throws -> Double {
        let path = contender == .grdb ? store.grdb.path : store.folio.path
        // A warm process drops the caches itself, between its untimed run and each timed one.
        if cell.cache == .cold, cell.process == .fresh { coldMethod = ColdCache.drop(path, allowDropCaches: options.dropCaches) }
        let output = try ChildProcess.run(
            [
                "matrix", contender == .grdb ? "grdb" : "folio", path, cell.shape.rawValue, cell.selectivity.rawValue,
                cell.process.rawValue, cell.cache.rawValue, options.dropCaches ? "drop" : "fadvise",
            ],
            environment: ["FOLIO_SCAN_WITHOUT": contender.scanWithout])
        let values = try ChildProcess.numbers(output, expected: 3)
        let expected = store.matches[cell.selectivity] ?? -1
        guard Int(values[1]) == expected else {
            throw BenchError(
                "\(contender.title)'s \(cell.shape.rawValue) scan \"\(cell.shape.predicateText(cell.selectivity))\" "
                    + "matched \(Int(values[1])) entities, expected \(expected)")
        }
        return values[0] / 1e6
    }

    /// Stops the run if a query wrote a field index after the warm-up (a timed run would then
    /// have paid for writing it, and the next ones read another index).
    private func checkFieldIndexes(after phase: String) throws {
        for store in scanMatrix.stores.values where ScanMatrix.FileStamp(store.fieldIndex) != store.index {
            throw BenchError("the \(store.shape.rawValue) store's field index changed during \(phase): a query wrote it")
        }
    }

    /// How many of `entities` each selectivity's predicate selects.
    private static func counts<E>(_ entities: [E], _ predicate: (ScanSelectivity) -> Predicate<E>) throws -> [ScanSelectivity: Int] {
        var counts: [ScanSelectivity: Int] = [:]
        for selectivity in ScanSelectivity.allCases {
            let test = predicate(selectivity)
            counts[selectivity] = try entities.reduce(0) { $0 + (try test.evaluate($1) ? 1 : 0) }
        }
        return counts
    }
}
