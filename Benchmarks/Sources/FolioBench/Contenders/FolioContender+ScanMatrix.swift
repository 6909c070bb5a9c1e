import Folio
import Foundation

/// Folio's side of the scan matrix, in a child process whose `FOLIO_SCAN_WITHOUT` chose the scan
/// accelerators: open the shape's store (not timed), then `Query(.all, where:)` with the
/// selectivity's predicate, the entities decoded, timed as `runs` says.
extension FolioContender {
    static func matrixScan(_ folder: URL, shape: ScanShape, selectivity: ScanSelectivity, runs: ScanRuns) async throws -> ScanRuns.Timing {
        switch shape {
        case .narrow: return try await scan(folder, NarrowTodo.predicate(selectivity), runs: runs)
        case .wide: return try await scan(folder, WideTodo.predicate(selectivity), runs: runs)
        }
    }

    private static func scan<E: Entity>(_ folder: URL, _ predicate: Predicate<E>, runs: ScanRuns) async throws -> ScanRuns.Timing {
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        let query = Query<E>(.all, where: predicate)
        let timing = try await runs.measure { try await store.fetch(query).count }
        try await store.close()
        return timing
    }
}
