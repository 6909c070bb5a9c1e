import Folio
import Foundation

/// The growth group (`--only growth`): how a durable commit, a cold open, a one-day read, a cold
/// get by id and row 10's predicate scan grow with the store's size, Folio next to SQLite holding
/// the same rows. The stores are day-partitioned with the ten-year store's density: a tenth of its
/// days, the ten-year store itself (shared with rows 5, 9 and 10), and three times its days with
/// `--thirty-years`. Each measure reuses its row's contenders and child processes; the work of a
/// measure is the same at every size (the same number of commits, of reads, one get, one query).
extension Runner {
    /// Seeds the stores of the sizes other than the ten-year store's (already seeded) and returns
    /// them, for the warm-up. Not timed.
    func prepareGrowth() async throws -> [DayStore] {
        guard let tenYearStore else { throw BenchError("the ten-year store was not seeded") }
        var seeded: [DayStore] = []
        for days in options.growthDays {
            if days == tenYearStore.days {
                growth.stores.append(tenYearStore)
                continue
            }
            let folio = scratch.appendingPathComponent("growth-\(days)-folio", isDirectory: true)
            let grdb = scratch.appendingPathComponent("growth-\(days).sqlite")
            let store = DayStore(folio: folio, grdb: grdb, workload: try await seedDayStore(days: days, folio: folio, grdb: grdb))
            growth.stores.append(store)
            seeded.append(store)
        }
        growth.stores.sort { $0.days < $1.days }
        return seeded
    }

    /// One round of every measure on every size, the engines in the round's order.
    func runGrowth(_ round: Int, flip: Bool, in folder: URL) async throws {
        for store in growth.stores {
            let (folio, grdb) = (store.folio.path, store.grdb.path)
            var measured = (folio: 0.0, grdb: 0.0)

            // Durable commits on a copy in use (upsert + outbox command each), as row 1, once the
            // copy's files are written out: their writeback grows with the store, and would
            // otherwise land in the commits' syncs.
            let edits = store.workload.edits(count: options.transactions, salt: UInt64(round))
            let perCommit = 1e6 / Double(edits.count)
            try await pair(
                flip,
                {
                    let copy = try await copyInUse(store.folio, "growth-\(store.days)-folio", in: folder)
                    ColdCache.settle()
                    measured.folio = try await FolioContender.transactions(copy, edits: edits, durability: .full).commit.seconds * perCommit
                },
                {
                    let copy = try copy(store.grdb, "growth-\(store.days).sqlite", in: folder)
                    ColdCache.settle()
                    measured.grdb = try GRDBContender.transactions(copy.path, edits: edits, synchronous: .full).commit.seconds * perCommit
                })
            growth.record(.commit, days: store.days, folio: measured.folio, grdb: measured.grdb)

            // One-day reads in an open store, as row 5's warm read.
            let days = store.workload.readDays(count: options.reads, salt: UInt64(round))
            try await pair(
                flip,
                {
                    measured.folio = try await FolioContender.warmReads(store.folio, days: days).0.seconds * 1e6
                },
                {
                    measured.grdb = try GRDBContender.warmReads(grdb, days: days).0.seconds * 1e6
                })
            growth.record(.readDay, days: store.days, folio: measured.folio, grdb: measured.grdb)

            // A fresh process, caches dropped: the open alone (the child then reads today, checked).
            let expected = store.todayTodos
            try await pair(
                flip,
                {
                    measured.folio = try coldRead("folio", folio, day: store.today, expected: expected).open
                },
                {
                    measured.grdb = try coldRead("grdb", grdb, day: store.today, expected: expected).open
                })
            growth.record(.coldOpen, days: store.days, folio: measured.folio, grdb: measured.grdb)

            // A fresh process, caches dropped: open + get one todo by id (another todo each round).
            var random = SplitMix64(seed: options.seed ^ (0x6E7 &* UInt64(round)) ^ UInt64(store.days))
            let todo = store.workload.todos[random.index(store.workload.todos.count)]
            try await pair(
                flip,
                {
                    measured.folio = try coldGet("folio", folio, todo)
                },
                {
                    measured.grdb = try coldGet("grdb", grdb, todo)
                })
            growth.record(.getByID, days: store.days, folio: measured.folio, grdb: measured.grdb)

            // Row 10's predicate over every day, files in the page cache (the cold get dropped it).
            ColdCache.warm(folio)
            ColdCache.warm(grdb)
            try await pair(
                flip,
                {
                    measured.folio = try scan("folio", folio, expected: store.scanMatches)
                },
                {
                    measured.grdb = try scan("grdb", grdb, expected: store.scanMatches)
                })
            growth.record(.scan, days: store.days, folio: measured.folio, grdb: measured.grdb)
        }
    }
}
