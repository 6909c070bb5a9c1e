import Foundation

/// The outbox group (`--only outbox`): how opening a store, reading a day, an entity's sync status,
/// committing with and without coalescing, and the `folio` tool's `status` and `outbox list` grow
/// with the number of pending commands, Folio next to SQLite holding the same rows and an outbox
/// table as long. Stores with 10, 500, 5,000 and 50,000 commands (`--outbox-lengths`) and the same
/// entities, seeded once (Runner+OutboxSeed.swift); what changes a store runs on a copy in use,
/// made each round. Targets: each measure with the longest outbox at most 1.2 times itself with the
/// shortest (Folio's, per round), the tool's commands under 1 s (Row+Outbox.swift).
extension Runner {
    func runOutbox(_ round: Int, flip: Bool, in folder: URL) async throws {
        guard let data = outbox.data else { throw BenchError("the outbox group's stores were not seeded") }
        let ops = options.outboxOps
        var folioThisRound: [OutboxAxis.Measure: [Int: Double]] = [:]
        for store in outbox.stores {
            let (folio, grdb, length) = (store.folio.path, store.grdb.path, store.length)
            var measured = (folio: 0.0, grdb: 0.0)
            func note(_ measure: OutboxAxis.Measure, grdb: Double?) {
                outbox.record(measure, length: length, folio: measured.folio, grdb: grdb)
                folioThisRound[measure, default: [:]][length] = measured.folio
            }

            // (a) A fresh process, caches dropped: the open alone (row 5's cold child, which then reads today, checked).
            try await pair(
                flip,
                { measured.folio = try coldRead("folio", folio, day: data.today, expected: data.todayTodos).open },
                { measured.grdb = try coldRead("grdb", grdb, day: data.today, expected: data.todayTodos).open })
            note(.coldOpen, grdb: measured.grdb)
            // Every other measure finds the files in the page cache.
            ColdCache.warm(folio)
            ColdCache.warm(grdb)

            // (b) One-day reads in an open store, as row 5's warm read.
            let days = data.todos.readDays(count: options.reads, salt: UInt64(round))
            try await pair(
                flip,
                { measured.folio = try await FolioContender.warmReads(store.folio, days: days).0.seconds * 1e6 },
                { measured.grdb = try GRDBContender.warmReads(grdb, days: days).0.seconds * 1e6 })
            note(.readDay, grdb: measured.grdb)

            // (c) The newest pending todo's sync status: in an open store, then in a fresh process.
            try await pair(
                flip,
                { measured.folio = try await FolioContender.syncStatuses(store.folio, id: store.statusID, count: ops).seconds * 1e6 },
                { measured.grdb = try GRDBContender.syncStatuses(grdb, id: store.statusID, count: ops).seconds * 1e6 })
            note(.statusWarm, grdb: measured.grdb)
            try await pair(
                flip,
                { measured.folio = try firstSyncStatus("folio", folio, id: store.statusID) },
                { measured.grdb = try firstSyncStatus("grdb", grdb, id: store.statusID) })
            note(.statusFresh, grdb: measured.grdb)

            // (f) The folio tool, on the store itself (it only reads).
            if let tool = outbox.cli {
                measured.folio = try FolioCLI.time(tool, ["status", folio], expecting: "outbox: \(length) pending")
                note(.cliStatus, grdb: nil)
                measured.folio = try FolioCLI.time(tool, ["outbox", "list", folio], expecting: "pending: \(length)")
                note(.cliList, grdb: nil)
            }

            // (d, e) Durable commits on a copy in use, after a sync (the copy's writeback would land in
            // them): coalescing first (the outbox keeps its length), then without, warm then fresh.
            let folioCopy = try await copyInUse(store.folio, "outbox-\(length)-folio", in: folder)
            let grdbCopy = try copy(store.grdb, "outbox-\(length).sqlite", in: folder).path
            ColdCache.settle()
            // A copy's first open counts every command it holds as possibly sent (FORMAT.md, copying
            // a folder), and coalescing never replaces those: the first change of each coalescing
            // draft (untimed) queues a command of its own, which the timed ones then replace. GRDB
            // replaces the seeded row at once (its outbox keeps its length).
            // The first two commits of a store are not timed either: the first looks ids up in the
            // saved id index, the second builds it in memory (FolioContender.seed).
            let drafts = OutboxEdit.coalescingDrafts(store.pendingDrafts)
            let untimed = (coalescing: max(drafts, 2), plain: 2)
            var pending = (folio: length, grdb: length)
            let phases: [(edits: [OutboxEdit], untimed: Int, warm: OutboxAxis.Measure, fresh: OutboxAxis.Measure)] = [
                (OutboxEdit.coalescing(store.pendingDrafts, count: untimed.coalescing + ops + 1), untimed.coalescing, .coalescedWarm, .coalescedFresh),
                (OutboxEdit.plain(data, count: untimed.plain + ops + 1, salt: UInt64(round)), untimed.plain, .commitWarm, .commitFresh),
            ]
            for phase in phases {
                // Every commit but the last in one open store (the first `untimed` not timed), the
                // last in a fresh process.
                let session = Array(phase.edits.dropLast())
                if phase.warm == .coalescedWarm {
                    pending.folio += drafts
                } else {
                    pending.folio += session.count
                    pending.grdb += session.count
                }
                try await pair(
                    flip,
                    {
                        measured.folio =
                            try await FolioContender.outboxCommits(folioCopy, session, untimed: phase.untimed, pendingAfter: pending.folio).seconds * 1e6
                    },
                    {
                        measured.grdb =
                            try GRDBContender.outboxCommits(grdbCopy, session, untimed: phase.untimed, pendingAfter: pending.grdb).seconds * 1e6
                    })
                note(phase.warm, grdb: measured.grdb)
                if phase.warm == .commitWarm { pending = (pending.folio + 1, pending.grdb + 1) }
                let last = phase.edits[phase.edits.count - 1]
                try await pair(
                    flip,
                    { measured.folio = try openAndCommit("folio", folioCopy.path, last, pendingAfter: pending.folio) },
                    { measured.grdb = try openAndCommit("grdb", grdbCopy, last, pendingAfter: pending.grdb) })
                note(phase.fresh, grdb: measured.grdb)
            }
        }
        // The targets: Folio with the longest outbox over Folio with the shortest, this round.
        let (shortest, longest) = (options.outboxLengths[0], options.outboxLengths[options.outboxLengths.count - 1])
        for (measure, values) in folioThisRound {
            guard let long = values[longest], let short = values[shortest] else { continue }
            record(measure.targetKey, long)
            recordPeer(measure.targetKey, short)
        }
    }

    /// Milliseconds of a fresh child's first sync status of the todo `id` (its open not timed).
    private func firstSyncStatus(_ engine: String, _ path: String, id: String) throws -> Double {
        try ChildProcess.numbers(ChildProcess.run(["outbox-status", engine, path, id]), expected: 1)[0] / 1e6
    }

    /// Milliseconds of a fresh child's open + one durable commit of `edit` (then `pendingAfter` commands, checked).
    private func openAndCommit(_ engine: String, _ path: String, _ edit: OutboxEdit, pendingAfter: Int) throws -> Double {
        let json = String(decoding: try JSONEncoder().encode(edit), as: UTF8.self)
        return try ChildProcess.numbers(ChildProcess.run(["outbox-commit", engine, path, json, String(pendingAfter)]), expected: 1)[0] / 1e6
    }
}
