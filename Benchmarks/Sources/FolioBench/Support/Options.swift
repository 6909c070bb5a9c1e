import Foundation

/// The command line of `folio-bench`.
struct Options: Sendable {
    var rounds = 5
    var todos = 10_000
    var transactions = 500
    var reads = 300
    var commands = 5000
    var tenYearDays = 3650
    var seed: UInt64 = 0x7E7E_2026
    var json: String?
    /// Where to write the chart of this run (`--chart FILE`), made from its JSON report.
    var chart: String?
    /// Whether the growth group also measures a store three times the ten-year one (30 years).
    var thirtyYears = false
    var countSyncs = true
    var dropCaches = true
    var quick = false
    /// The groups of rows to run (`--only`); all of them by default.
    var groups: Set<Group> = Set(Group.allCases)
    /// The outbox group's lengths: how many commands wait in each of its stores (`--outbox-lengths`).
    var outboxLengths = [10, 500, 5000, 50_000]
    /// The outbox group's warm operations per measure: commits, sync statuses (`--outbox-ops`).
    var outboxOps = 50
    /// The `folio` command line tool the outbox group times (`--folio-cli`); built from the
    /// repository when not given (Children/FolioCLI.swift).
    var folioCLI: String?

    /// The groups of rows `--only` chooses from, in print order.
    enum Group: String, CaseIterable, Sendable {
        /// 1–4: durable, relaxed and concurrent transactions, bulk imports, and the floor of the
        /// import with outbox (its command files created bare).
        case write
        /// 5: warm and cold one-day reads, the cold one-day read of the ten-year store.
        case read
        /// 6: draining the outbox to the test server.
        case drain
        /// 7: the disk's own limits.
        case disk
        /// 8: sync syscalls, commit costs and a session's peak memory, measured once, and the
        /// floor of a commit's context switches (a bare overwrite + `fdatasync`).
        case costs
        /// 9: migrating the ten-year store.
        case migrate
        /// 10: scans, reads, a cold get (and its floor, the duplicate-id guarantee's calls) and
        /// memory over the ten-year store.
        case tenyear
        /// How five costs grow with the store's size: stores of 1 and 10 years (30 with
        /// `--thirty-years`), Folio next to GRDB (Runner+Growth.swift).
        case growth
        /// The scan matrix: predicate scans by entity shape, selectivity, process and page cache,
        /// Folio with each scan accelerator turned off in turn (Runner+ScanMatrix.swift).
        case scanmatrix
        /// How costs grow with the outbox's length: stores with 10 to 50,000 pending commands and
        /// the same entities, Folio next to GRDB (Runner+Outbox.swift).
        case outbox
    }

    static let usage = """
        usage: folio-bench [--quick] [--rounds R] [--todos N] [--transactions N] [--reads N]
                           [--commands N] [--ten-year-days N] [--seed S] [--json FILE]
                           [--chart FILE] [--thirty-years] [--no-strace] [--no-drop-caches]
                           [--only GROUP,...] [--outbox-lengths N,...] [--outbox-ops N]
                           [--folio-cli PATH]
               folio-bench chart RESULTS.json CHART.svg

          --quick            2 rounds, 2,000 todos, 100 transactions, 500 drained commands, a 365-day
                             "ten-year" store, outboxes of 10 to 5,000 commands and 10 warm
                             operations: a smoke test of every row (ratios are noisier)
          --rounds R         rounds, contenders interleaved in each (default 5)
          --todos N          todos in the one-year workload (default 10000)
          --transactions N   transactions per write contender and round (default 500)
          --reads N          one-day fetches per warm-read contender and round (default 300)
          --commands N       outbox commands per drain contender and round (default 5000)
          --ten-year-days N  days of the ten-year store (default 3650, 100,000 todos)
          --seed S           the workload's seed (default 0x7E7E2026)
          --json FILE        also write the results as JSON to FILE
          --chart FILE       also draw the results as an SVG chart to FILE (as `chart` does from
                             the JSON)
          --thirty-years     the growth group also measures a store of 30 years (3 times the
                             ten-year store's days; about a minute more of seeding)
          --no-strace        skip counting sync syscalls (needs strace and ptrace)
          --no-drop-caches   make reads cold with posix_fadvise only, never drop_caches
          --outbox-lengths L the outbox group's pending commands per store, comma-separated, at
                             least two (default 10,500,5000,50000; targets compare the last with
                             the first)
          --outbox-ops N     the outbox group's warm commits and sync statuses per measure
                             (default 50)
          --folio-cli PATH   the folio tool the outbox group times (default: built from the
                             repository with swift build -c release --product folio)
          --only GROUPS      run only these groups of rows, comma-separated: write (1-4, and the
                             bulk import's floor: its command files created bare), read (5),
                             drain (6), disk (7), costs (8: syncs, commit costs, peak memory, and
                             a bare overwrite + fdatasync, the commit's floor), migrate (9),
                             tenyear (10: the ten-year store's scans, reads, cold get and its
                             floor, the duplicate-id guarantee's calls, and memory), growth
                             (commit, cold open, one day, get by id and a scan on stores of 1
                             and 10 years), scanmatrix (predicate scans by shape, selectivity,
                             process and cache, Folio's scan accelerators off one by one),
                             outbox (open, a day, sync status, commits and the folio tool with
                             10 to 50,000 pending commands); e.g. --only tenyear

          chart              draws a results file written by --json as an SVG: each row's ratio
                             against its target, and how costs grow with the store's size
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var index = 0
        func number(_ name: String, _ range: ClosedRange<Int>) throws -> Int {
            index += 1
            guard index < arguments.count, let value = Int(arguments[index]), range.contains(value) else {
                throw BenchError("\(name) needs a number in \(range.lowerBound)...\(range.upperBound)\n\(usage)")
            }
            return value
        }
        var explicit = Options()
        var given: Set<String> = []
        while index < arguments.count {
            let name = arguments[index]
            given.insert(name)
            switch name {
            case "--quick": options.quick = true
            case "--rounds": explicit.rounds = try number(name, 1...100)
            case "--todos": explicit.todos = try number(name, 100...1_000_000)
            case "--transactions": explicit.transactions = try number(name, 8...100_000)
            case "--reads": explicit.reads = try number(name, 1...100_000)
            case "--commands": explicit.commands = try number(name, 10...1_000_000)
            case "--ten-year-days": explicit.tenYearDays = try number(name, 10...36_500)
            case "--seed": explicit.seed = UInt64(try number(name, 0...Int.max))
            case "--json":
                index += 1
                guard index < arguments.count else { throw BenchError("--json needs a file\n\(usage)") }
                options.json = arguments[index]
            case "--chart":
                index += 1
                guard index < arguments.count else { throw BenchError("--chart needs a file\n\(usage)") }
                options.chart = arguments[index]
            case "--thirty-years": options.thirtyYears = true
            case "--no-strace": options.countSyncs = false
            case "--no-drop-caches": options.dropCaches = false
            case "--only":
                index += 1
                guard index < arguments.count else { throw BenchError("--only needs groups\n\(usage)") }
                options.groups = try Set(
                    arguments[index].split(separator: ",").map { name in
                        guard let group = Group(rawValue: String(name)) else {
                            throw BenchError("--only: unknown group \(name)\n\(usage)")
                        }
                        return group
                    })
            case "--outbox-lengths":
                index += 1
                let lengths = index < arguments.count ? arguments[index].split(separator: ",").compactMap { Int($0) } : []
                guard lengths.count >= 2, lengths.allSatisfy({ (2...1_000_000).contains($0) }), Set(lengths).count == lengths.count else {
                    throw BenchError("--outbox-lengths needs at least two different numbers in 2...1000000\n\(usage)")
                }
                explicit.outboxLengths = lengths.sorted()
            case "--outbox-ops": explicit.outboxOps = try number(name, 1...100_000)
            case "--folio-cli":
                index += 1
                guard index < arguments.count else { throw BenchError("--folio-cli needs a path\n\(usage)") }
                options.folioCLI = arguments[index]
            case "--help", "-h":
                print(usage)
                exit(0)
            default:
                throw BenchError("unknown argument \(name)\n\(usage)")
            }
            index += 1
        }
        if options.quick {
            (options.rounds, options.todos, options.transactions, options.reads, options.commands, options.tenYearDays) =
                (2, 2000, 100, 100, 500, 365)
            (options.outboxLengths, options.outboxOps) = ([10, 500, 5000], 10)
        }
        // Explicit sizes win over --quick's.
        if given.contains("--rounds") { options.rounds = explicit.rounds }
        if given.contains("--todos") { options.todos = explicit.todos }
        if given.contains("--transactions") { options.transactions = explicit.transactions }
        if given.contains("--reads") { options.reads = explicit.reads }
        if given.contains("--commands") { options.commands = explicit.commands }
        if given.contains("--ten-year-days") { options.tenYearDays = explicit.tenYearDays }
        if given.contains("--seed") { options.seed = explicit.seed }
        if given.contains("--outbox-lengths") { options.outboxLengths = explicit.outboxLengths }
        if given.contains("--outbox-ops") { options.outboxOps = explicit.outboxOps }
        return options
    }

    /// Whether `--only` left `group` in.
    func runs(_ group: Group) -> Bool { groups.contains(group) }

    /// The sizes of the growth group's stores, in days: a tenth of the ten-year store, the
    /// ten-year store itself, and with `--thirty-years` three times it (365, 3,650 and 10,950 by
    /// default).
    var growthDays: [Int] {
        [max(tenYearDays / 10, 1), tenYearDays] + (thirtyYears ? [3 * tenYearDays] : [])
    }
}
