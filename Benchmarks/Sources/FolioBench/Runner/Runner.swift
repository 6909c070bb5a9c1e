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
    var growth = Growth()
    var outbox = OutboxAxis()
    /// The ten-year store of rows 5, 9 and 10 and of the growth group (nil until `prepare` seeds it).
    var tenYearStore: DayStore?
    /// The command files of the bulk import with outbox (names and bytes, as Folio writes them),
    /// which its floor creates bare (made by `prepare` for the write group).
    var commandFiles: [(name: String, bytes: [UInt8])] = []
    /// What each floor row's floor did (the calls it counted), printed under the table.
    var floorNotes: [Row.Key: String] = [:]
    /// The cost of one bare overwrite + `fdatasync` (row 8's floor), measured before and after
    /// Folio's commits: wall µs, CPU µs, voluntary and involuntary context switches.
    var commitFloor: [[Double]] = []

    init(options: Options) throws {
        self.options = options
        rows = Row.table(tenYearDays: options.tenYearDays)
            .merging(Row.outboxTable(shortest: options.outboxLengths[0], longest: options.outboxLengths[options.outboxLengths.count - 1])) { $1 }
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
    /// (rows 5 and 10 and the growth group, in child processes); those that change it (9, the
    /// growth group's commits) work on a copy.
    func prepare() async throws {
        if options.runs(.write) || options.runs(.read) {
            try await FolioContender.seed(folioTemplate, todos: workload.todos)
            try GRDBContender.seed(grdbTemplate.path, todos: workload.todos)
        }
        if options.runs(.write) { commandFiles = try await Self.importCommandFiles(workload.todos, in: scratch) }
        if options.runs(.scanmatrix) { try await prepareScanMatrix() }
        if options.runs(.outbox) { try await prepareOutbox() }
        guard options.runs(.read) || options.runs(.migrate) || options.runs(.tenyear) || options.runs(.growth) else { return }
        let tenYears = DayStore(
            folio: folioTenYears, grdb: grdbTenYears,
            workload: try await seedDayStore(days: options.tenYearDays, folio: folioTenYears, grdb: grdbTenYears))
        tenYearStore = tenYears
        var warmUp: [DayStore] = []
        if options.runs(.tenyear) || options.runs(.growth) { warmUp.append(tenYears) }
        if options.runs(.growth) { warmUp += try await prepareGrowth() }
        if !warmUp.isEmpty { try warmUpDayStores(warmUp) }
    }

    /// Seeds `days` days of todos with the one-year workload's density (todos per day) into a Folio
    /// store at `folio` and a SQLite database at `grdb`, the same rows in both. Not timed.
    func seedDayStore(days: Int, folio: URL, grdb: URL) async throws -> Workload {
        let perDay = Double(options.todos) / 365
        let workload = Workload(seed: options.seed ^ 0x10, todoCount: Int(perDay * Double(days)), dayCount: days)
        try await FolioContender.seed(folio, todos: workload.todos)
        try GRDBContender.seed(grdb.path, todos: workload.todos)
        return workload
    }

    /// The ten-year workload (nil until `prepare` seeds it), its last day ("today") and how many
    /// todos it holds in all and on that day.
    var tenYears: Workload? { tenYearStore?.workload }
    var tenYearDay: String { tenYearStore?.today ?? "" }
    var tenYearTodos: Int { tenYearStore?.workload.todos.count ?? 0 }
    var tenYearDayTodos: Int { tenYearStore?.todayTodos ?? 0 }

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
