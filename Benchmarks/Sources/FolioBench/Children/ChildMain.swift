import Folio
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hidden subcommands the benchmark runs in child processes of itself:
///
///     __child cold  folio|grdb PATH DAY                      open + one-day query, prints "nanoseconds todos
///                                                            open-nanoseconds"
///     __child syncs folio-full|folio-relaxed|grdb-full|grdb-normal PATH SEED TODOS COUNT
///                                                            transactions between syscall markers, prints
///                                                            "wall-µs cpu-µs voluntary involuntary" per transaction
///     __child rss   folio|grdb|none PATH SEED TODOS COUNT    a whole workload, prints "peak-kB"
///
/// and those of the machine's floors (ChildMain+Floors.swift), of row 10 (ChildMain+TenYears.swift),
/// of the scan matrix (ChildMain+ScanMatrix.swift) and of the outbox group (ChildMain+Outbox.swift).
enum ChildMain {
    static func run(_ arguments: [String]) async throws {
        guard let command = arguments.first, arguments.count >= 3 else { throw BenchError("bad child arguments \(arguments)") }
        let engine = arguments[1]
        let path = arguments[2]
        switch command {
        case "cold":
            guard arguments.count == 4 else { throw BenchError("cold: bad arguments") }
            let read =
                engine == "folio"
                ? try await FolioContender.openAndRead(URL(fileURLWithPath: path, isDirectory: true), day: arguments[3])
                : try GRDBContender.openAndRead(path, day: arguments[3])
            print("\(read.total.nanoseconds) \(read.todos) \(read.open.nanoseconds)")
        case "syncs":
            let (workload, count) = try workload(arguments)
            try await syncs(engine: engine, path: path, workload: workload, count: count)
        case "bulk":
            // For profiling the bulk import alone: `perf record folio-bench __child bulk folio|grdb PATH SEED TODOS 1`
            // (with the outbox; 0 without).
            let (workload, outbox) = try workload(arguments)
            let timing =
                engine == "folio"
                ? try await FolioContender.bulkImport(URL(fileURLWithPath: path, isDirectory: true), todos: workload.todos, outbox: outbox != 0)
                : try GRDBContender.bulkImport(path, todos: workload.todos, outbox: outbox != 0)
            print("\(timing.commit.nanoseconds) \(timing.total.nanoseconds)")
        case "rss":
            let (workload, count) = try workload(arguments)
            try await peakMemory(engine: engine, path: path, workload: workload, count: count)
            print("\(PeakMemory.kilobytes())")
        case "matrix":
            print(try await scanMatrix(engine: engine, path: path, Array(arguments.dropFirst(3))))
        default:
            let rest = Array(arguments.dropFirst(3))
            var line = try machineFloor(command, kind: engine, path: path, rest)
            if line == nil { line = try await tenYears(command, engine: engine, path: path, rest) }
            if line == nil { line = try await outbox(command, engine: engine, path: path, rest) }
            guard let line else { throw BenchError("unknown child command \(command)") }
            print(line)
        }
    }

    private static func workload(_ arguments: [String]) throws -> (Workload, Int) {
        guard arguments.count == 6, let seed = UInt64(arguments[3]), let todos = Int(arguments[4]), let count = Int(arguments[5]) else {
            throw BenchError("bad child arguments \(arguments)")
        }
        return (Workload(seed: seed, todoCount: todos, dayCount: 365), count)
    }

    /// A syscall that does nothing but show in a trace: `access` of a path that does not exist.
    static func marker(_ name: String) {
        _ = access(SyncCounter.markerPrefix + name, F_OK)
    }

    /// Seeds (before the first marker), then `count` durable or relaxed transactions between the
    /// markers `begin` and `committed`, then the checkpoint before `end`. Prints the commits'
    /// wall time, CPU time and context switches per transaction.
    private static func syncs(engine: String, path: String, workload: Workload, count: Int) async throws {
        let edits = workload.edits(count: count, salt: 99)
        switch engine {
        case "folio-full", "folio-relaxed":
            let folder = URL(fileURLWithPath: path, isDirectory: true)
            try await FolioContender.seed(folder, todos: workload.todos)
            ColdCache.settle()
            print(try await FolioContender.markedTransactions(folder, edits: edits, durability: engine == "folio-full" ? .full : .relaxed))
        case "grdb-full", "grdb-normal":
            try GRDBContender.seed(path, todos: workload.todos)
            ColdCache.settle()
            print(try GRDBContender.markedTransactions(path, edits: edits, synchronous: engine == "grdb-full" ? .full : .normal))
        default:
            throw BenchError("unknown engine \(engine)")
        }
    }

    /// Everything a contender does in one session: bulk import, transactions, one read of every day.
    private static func peakMemory(engine: String, path: String, workload: Workload, count: Int) async throws {
        let edits = workload.edits(count: count, salt: 7)
        switch engine {
        case "folio":
            let folder = URL(fileURLWithPath: path, isDirectory: true)
            _ = try await FolioContender.bulkImport(folder, todos: workload.todos, outbox: false)
            _ = try await FolioContender.transactions(folder, edits: edits, durability: .full)
            _ = try await FolioContender.warmReads(folder, days: workload.days)
        case "grdb":
            _ = try GRDBContender.bulkImport(path, todos: workload.todos, outbox: false)
            _ = try GRDBContender.transactions(path, edits: edits, synchronous: .full)
            _ = try GRDBContender.warmReads(path, days: workload.days)
        case "none":
            break
        default:
            throw BenchError("unknown engine \(engine)")
        }
    }
}
