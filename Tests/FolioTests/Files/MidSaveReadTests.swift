@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// A file caught in the middle of a person's save (issue 25, "Found" 7): an editor that saves in
/// place (nano, vim with `backupcopy=yes`) truncates the day file and writes it again in pieces,
/// and a read at that instant sees it empty or cut short. Folio reads such a file again after a
/// short wait (SettledRead) instead of failing: the app's reads of that day and its writes beside
/// it never fail while the person saves the file without changing it, in a store that is open
/// (which could serve its last good state) and in one opened for each command, as a command line
/// app such as `todo add` does (which has no other state to serve: it failed with "invalid JSON").
///
/// The model is the file itself: the editor saves the same bytes every time, so every read of the
/// day answers the todos it holds. `FOLIO_MID_SAVE_SEED` replays a seed (the timing still varies).
@Suite struct MidSaveReadTests {
    @Test func readsAndWritesNeverFailWhileAnEditorSavesInPlace() async throws {
        let seed = SplitMix64.seed(replaying: "FOLIO_MID_SAVE_SEED")
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder()
        let store = try await Store.open(at: folder.url, configuration: .testing())
        let day = "2026-11-22", path = "todos/2026-11/2026-11-22.json"
        var expected: Set<UUID> = []
        for index in 0..<40 {
            let item = todo("todo \(index) with a longer title, so that a save takes more than one write", on: day)
            try await store.write { tx in try tx.upsert(item) }
            expected.insert(item.id)
        }
        try await store.checkpoint()

        // The editor: 200 saves of the same bytes, each truncating the file and writing it in two
        // pieces a few milliseconds apart (nano's way), 10 to 60 ms apart (a person saves far less
        // often; a read that meets one save after another for 0.4 s is not a case people make).
        let saves = 200
        let script = """
            import os, random, sys, time
            path, saves, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
            rng = random.Random(seed)
            data = open(path, "rb").read()
            for _ in range(saves):
                with open(path, "r+b") as f:
                    f.truncate(0)
                    cut = rng.randrange(1, len(data))
                    f.write(data[:cut]); f.flush(); os.fsync(f.fileno())
                    time.sleep(rng.uniform(0.001, 0.006))
                    f.write(data[cut:])
                time.sleep(rng.uniform(0.01, 0.06))
            print("saved", saves)
            """
        let editor = Process()
        editor.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        editor.arguments = ["python3", "-c", script, folder.file(path).path, String(saves), String(random.next() % 1_000_000)]
        try editor.run()

        var (reads, opens, writes, failures, wrong) = (0, 0, 0, 0, 0)
        var problems: [String] = []
        func check(_ found: [Todo], _ what: String) {
            reads += 1
            if Set(found.map(\.id)) != expected {
                wrong += 1
                problems.append("\(what): \(found.count) todos instead of \(expected.count)")
            }
        }
        // The app reads the day and writes beside it for as long as the editor saves (at least
        // 50 fresh opens), in the open store and in a store opened for each command. A slow machine
        // takes longer; the deadline only bounds a hung run, which fails below.
        let deadline = ContinuousClock.now + .seconds(600)
        while (editor.isRunning || opens < 50) && opens < 2_000 && ContinuousClock.now < deadline {
            do {
                check(try await store.fetch(Query<Todo>(.day(day))), "the open store's read \(reads)")
                opens += 1
                let command = try await Store.open(at: folder.url, configuration: .testing())
                do {
                    check(try await command.fetch(Query<Todo>(.day(day))), "open \(opens)'s read")
                    if random.next() % 2 == 0 {
                        let other = todo("beside \(writes)", on: "2026-11-23")
                        try await command.write { tx in try tx.upsert(other) }
                        writes += 1
                    }
                } catch {
                    failures += 1
                    problems.append("open \(opens): \(error)")
                }
                try await command.close()
            } catch {
                failures += 1
                problems.append("read \(reads) or open \(opens): \(error)")
            }
        }
        #expect(!editor.isRunning && opens >= 50, "the reads stopped after 600 s: \(opens) opens, the editor still running: \(editor.isRunning)")
        editor.waitUntilExit()
        #expect(editor.terminationStatus == 0, "the editor script failed")
        try await store.close()
        print(
            "mid-save reads: \(saves) in-place saves, \(reads) reads, \(opens) stores opened for a command, \(writes) writes beside them, \(failures) failures, "
                + "\(wrong) wrong answers (seed 0x\(String(seed, radix: 16)))")
        #expect(failures == 0 && wrong == 0, "seed 0x\(String(seed, radix: 16)):\n\(problems.prefix(8).joined(separator: "\n"))")
    }
}
