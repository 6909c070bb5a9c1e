import Folio
import FolioTestServer
import Foundation

/// Runs every contender, round by round, and collects the rows of the result table.
///
/// Each round runs each comparison's contenders one after the other, in the order A B in odd
/// rounds and B A in even ones (so neither always runs on a disk the other just dirtied), each in
/// a fresh folder copied from a template seeded once. Timing is measured, never asserted.
@MainActor
final class Runner {
    let options: Options
    let workload: Workload
    let scratch: URL
    let server: TestServer
    var rows: [Row.Key: Row]
    var coldMethod = ColdCache.Method.none
    var syncCounts: [SyncCounter.Count] = []
    var syncProblem: String?
    var peakMemory: [(String, Int)] = []
    var scanMatrix = ScanMatrix()

    init(options: Options) throws {
        self.options = options
        rows = Row.table(tenYearDays: options.tenYearDays)
        workload = Workload(seed: options.seed, todoCount: options.todos, dayCount: 365)
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("folio-bench-" + UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        server = try TestServer()
        server.recordsRequests = false
    }

    /// Where each contender's seeded one-year template lives (made by `prepare`).
    var folioTemplate: URL { scratch.appendingPathComponent("template-folio", isDirectory: true) }
    var grdbTemplate: URL { scratch.appendingPathComponent("template.sqlite") }
    var folioTenYears: URL { scratch.appendingPathComponent("ten-years-folio", isDirectory: true) }
    var grdbTenYears: URL { scratch.appendingPathComponent("ten-years.sqlite") }

    /// Seeds what the chosen groups need: the one-year templates, the scan matrix's stores, and the
    /// ten-year store with the same density (todos per day), all as data already synced (no outbox). Not timed. The
    /// ten-year store is seeded once per run and shared by every measure that only reads it
    /// (rows 5 and 10, in child processes); those that change it (9) work on a copy.
    func prepare() async throws {
        if options.runs(.write) || options.runs(.read) {
            try await FolioContender.seed(folioTemplate, todos: workload.todos)
            try GRDBContender.seed(grdbTemplate.path, todos: workload.todos)
        }
        if options.runs(.scanmatrix) { try await prepareScanMatrix() }
        guard options.runs(.read) || options.runs(.migrate) || options.runs(.tenyear) else { return }
        let perDay = Double(options.todos) / 365
        let tenYears = Workload(
            seed: options.seed ^ 0x10, todoCount: Int(perDay * Double(options.tenYearDays)),
            dayCount: options.tenYearDays)
        try await FolioContender.seed(folioTenYears, todos: tenYears.todos)
        try GRDBContender.seed(grdbTenYears.path, todos: tenYears.todos)
        tenYearDay = tenYears.days[tenYears.days.count - 1]
        tenYearTodos = tenYears.todos.count
        tenYearDayTodos = tenYears.todosByDay[tenYearDay]?.count ?? 0
        self.tenYears = tenYears
        if options.runs(.tenyear) { try warmUpTenYears() }
    }

    /// The ten-year workload (nil until `prepare` seeds it), its last day ("today") and how many
    /// todos it holds in all and on that day.
    var tenYears: Workload?
    var tenYearDay = ""
    var tenYearTodos = 0
    var tenYearDayTodos = 0

    func runRounds(log: (String) -> Void) async throws {
        for round in 1...options.rounds {
            let start = ContinuousClock.now
            let folder = scratch.appendingPathComponent("round-\(round)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try await runRound(round, in: folder)
            // Kept until the run ends (removeScratch): on ext4, creating files shortly after
            // deleting many makes the allocator skip recently freed inodes one by one (`perf`:
            // `recently_deleted`), which would charge the next round's file-creating rows with
            // this round's clean-up.
            log("round \(round)/\(options.rounds) done in \(Format.value((ContinuousClock.now - start).seconds)) s")
        }
    }

    func removeScratch() {
        server.stop()
        do { try FileManager.default.removeItem(at: scratch) } catch {
            FileHandle.standardError.write(Data("folio-bench: could not remove \(scratch.path): \(error)\n".utf8))
        }
    }

    func record(_ key: Row.Key, _ value: Double) { rows[key]?.values.append(value) }
    func recordPeer(_ key: Row.Key, _ value: Double) { rows[key]?.peerValues.append(value) }

    /// Runs `a` then `b`, or `b` then `a` when `flip`.
    func pair(_ flip: Bool, _ a: () async throws -> Void, _ b: () async throws -> Void) async throws {
        if flip {
            try await b()
            try await a()
        } else {
            try await a()
            try await b()
        }
    }

    func copy(_ source: URL, _ name: String, in folder: URL) throws -> URL {
        let target = folder.appendingPathComponent(name, isDirectory: source.hasDirectoryPath)
        try FileManager.default.copyItem(at: source, to: target)
        return target
    }

    /// A copy of a Folio template as a store in use: opened once and its id index made current
    /// (a `get` of an id it does not hold), not timed. A copy's first open checks every file
    /// against the copied journal, and its first write rebuilds the id index (the copied one
    /// names the template's inodes): one-time costs that row 5's "first open of a copied store"
    /// measures, not the rows that time commits.
    func copyInUse(_ source: URL, _ name: String, in folder: URL) async throws -> URL {
        let target = try copy(source, name, in: folder)
        let store = try await Store.open(at: target, configuration: FolioContender.configuration(.full))
        _ = try await store.get(Todo.self, id: "absent")
        try await store.close()
        return target
    }
}
