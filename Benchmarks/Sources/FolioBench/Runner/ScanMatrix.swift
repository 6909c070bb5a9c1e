import Foundation

/// What the scan matrix seeded and measured: a store per entity shape (Folio's folder and
/// SQLite's file, the same entities), and per cell (shape × selectivity × process × page cache)
/// one ``Row`` per Folio contender, its values Folio's milliseconds per round and its peer's the
/// GRDB child's of the same round, so each ratio is of runs side by side.
struct ScanMatrix: Sendable {
    struct Store: Sendable {
        var shape: ScanShape
        var folio: URL
        var grdb: URL
        var days: Int
        var entities: Int
        /// How many entities each predicate selects, counted on the workload with the predicate itself.
        var matches: [ScanSelectivity: Int]
        /// SQLite's `EXPLAIN QUERY PLAN` of each clause.
        var plans: [ScanSelectivity: String] = [:]
        /// The field index file as the warm-up left it: no timed query may write it again.
        var index: FileStamp?
        /// Bytes on disk after the warm-up: Folio's data files and how many, its field index,
        /// SQLite's database file (what a cold scan may read).
        var dataFiles = 0
        var dataBytes = 0
        var indexBytes = 0
        var sqliteBytes = 0

        /// Measures the sizes above.
        mutating func measureSizes() {
            let manager = FileManager.default
            func size(_ path: String) -> Int { ((try? manager.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0 }
            (dataFiles, dataBytes) = (0, 0)
            for case let relative as String in manager.enumerator(atPath: folio.path) ?? FileManager.DirectoryEnumerator()
            where !relative.hasPrefix(".folio") && relative.hasSuffix(".json") {
                dataFiles += 1
                dataBytes += size(folio.path + "/" + relative)
            }
            indexBytes = size(fieldIndex.path)
            sqliteBytes = size(grdb.path)
        }

        var fieldIndex: URL { folio.appendingPathComponent(".folio/index/\(shape.rawValue).fields") }
    }

    struct Cell: Hashable, Sendable {
        var shape: ScanShape
        var selectivity: ScanSelectivity
        var process: ScanRuns.Process
        var cache: ScanRuns.Cache
    }

    /// A file's identity and size, to tell whether it was written.
    struct FileStamp: Equatable, Sendable {
        var inode: UInt64
        var size: UInt64
        var modified: Date

        init?(_ url: URL) {
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                let inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value,
                let size = (attributes[.size] as? NSNumber)?.uint64Value,
                let modified = attributes[.modificationDate] as? Date
            else { return nil }
            (self.inode, self.size, self.modified) = (inode, size, modified)
        }
    }

    var stores: [ScanShape: Store] = [:]
    var rows: [Cell: [ScanContender: Row]] = [:]

    /// Every cell, in run and print order.
    static let cells: [Cell] = ScanShape.allCases.flatMap { shape in
        ScanSelectivity.allCases.flatMap { selectivity in
            ScanRuns.Process.allCases.flatMap { process in
                ScanRuns.Cache.allCases.map { Cell(shape: shape, selectivity: selectivity, process: process, cache: $0) }
            }
        }
    }

    /// The ratio to GRDB Folio aims at in a predicate scan (row 10's target).
    static let target = 3.0

    /// One round's milliseconds of every contender in `cell`.
    mutating func record(_ cell: Cell, _ values: [ScanContender: Double]) {
        guard let peer = values[.grdb], let store = stores[cell.shape] else { return }
        for contender in ScanContender.folio {
            guard let value = values[contender] else { continue }
            var row =
                rows[cell]?[contender]
                ?? Row(
                    name: "scan matrix, \(cell.shape.rawValue), \(cell.selectivity.rawValue) \(cell.shape.predicateText(cell.selectivity))"
                        + " (\(store.matches[cell.selectivity] ?? 0) of \(store.entities)), \(cell.process.rawValue) process, \(cell.cache.rawValue) page cache",
                    unit: "ms", direction: .lowerIsBetter, contender: contender.title, peer: "GRDB " + cell.shape.sql(cell.selectivity),
                    target: Self.target)
            row.values.append(value)
            row.peerValues.append(peer)
            rows[cell, default: [:]][contender] = row
        }
    }

    /// The JSON report's key of a cell's row.
    static func key(_ cell: Cell, _ contender: ScanContender) -> String {
        "scanMatrix.\(cell.shape.rawValue).\(cell.selectivity.rawValue).\(cell.process.rawValue)Process.\(cell.cache.rawValue)Cache.\(contender.rawValue)"
    }
}
