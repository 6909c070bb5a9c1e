@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// Two folders that apps write in turns, copied back and forth with rsync as FORMAT.md says
/// ("Sync tools": `rsync -a --checksum --delete`, without `.folio/` and `outbox/`). The model, from
/// FORMAT.md: after a copy, the folder copied to holds exactly what the folder copied from holds.
/// The days are small, so they are emptied often (Folio then removes the file and keeps the
/// removal as a revision) and written again. On the code that loaded an absent file without a
/// revision, the next file named no ancestors and the other folder brought back deleted entities.
///
/// A run does a fixed number of rounds, however long it takes. `FOLIO_TURNS_SEED` replays a seed.
@Suite struct CopiesInTurnsModelTests {
    static let rounds = 30

    @Test(.enabled(if: Tools.runs("rsync"), "needs rsync (\(Tools.install("rsync"))); FOLIO_REQUIRE_TOOLS=1 makes its absence a failure"))
    func eachCopyHoldsWhatItWasCopiedFrom() async throws {
        let rsync = try Tools.require("rsync")
        let seed = SplitMix64.seed(replaying: "FOLIO_TURNS_SEED")
        var random = SplitMix64(seed: seed)
        let a = TemporaryFolder(), b = TemporaryFolder()
        var model: Set<String> = []
        var next = 0, copies = 0, emptied = 0
        var differences: [String] = []

        /// Some adds and deletes in `folder`, one transaction each, as the app makes them.
        func work(in folder: TemporaryFolder) async throws {
            let store = try await Store.open(at: folder.url, configuration: .testing())
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                if model.isEmpty || Int.random(in: 0..<100, using: &random) < 45 {
                    next += 1
                    let id = "S-\(next)"
                    try await store.write { tx in try tx.upsert(OneDay.slot(id)) }
                    model.insert(id)
                } else {
                    let id = model.sorted()[Int.random(in: 0..<model.count, using: &random)]
                    _ = try await store.write { tx in try tx.delete(Slot.self, id: id) }
                    model.remove(id)
                    if model.isEmpty { emptied += 1 }
                }
            }
            try await store.close()
        }
        func copy(_ from: TemporaryFolder, to: TemporaryFolder, _ context: String) async throws {
            let result = Shell.run(
                rsync,
                [
                    "-a", "--checksum", "--delete", "--exclude", ".folio", "--exclude", "outbox",
                    from.url.path + "/", to.url.path + "/",
                ])
            try #require(result.status == 0, "rsync: \(result.errors)")
            copies += 1
            let store = try await Store.open(at: to.url, configuration: .testing())
            let held = try await OneDay.ids(store)
            try await store.close()
            if held != model.sorted() { differences.append("\(context): \(held), the model says \(model.sorted())") }
        }

        try await work(in: a)
        for round in 1...Self.rounds {
            try await copy(a, to: b, "round \(round), A to B")
            try await work(in: b)
            try await copy(b, to: a, "round \(round), B to A")
            try await work(in: a)
        }
        print(
            "copies in turns: \(Self.rounds) rounds, \(copies) rsync copies, \(emptied) emptied days, "
                + "\(differences.count) differences (seed \(seed))")
        #expect(differences.isEmpty, "seed \(seed): \(differences.prefix(5).joined(separator: "; "))")
        #expect(emptied > 0, "seed \(seed): no day was emptied, so the case this test is for did not happen")
    }
}
