@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The entity index's change lines, against FORMAT.md's reading of them ("The entity index"): the
/// sorted lines, then every change line in order, a `+` listing its number under its key and a `-`
/// taking its number out whatever its key. The index folds its changes once when it is opened, so
/// a lookup does not walk them all; this checks the fold answers as reading them in order does,
/// for every key, on files written and appended to as a checkpoint does (numbers added, sent,
/// added again under another key, removed under a zero key). Replays with `FOLIO_INDEX_SEED`.
@Suite struct EntityIndexChangesTests {
    /// FORMAT.md's reading: the numbers listed under `key`, in the order the lines leave them.
    static func model(sorted: [OutboxEntityIndex.Line], changes: [(added: Bool, line: OutboxEntityIndex.Line)], key: UInt64) -> [UInt64] {
        var found = sorted.sorted().filter { $0.key == key }.map(\.sequence)
        for change in changes where change.line.key == key || !change.added {
            found.removeAll { $0 == change.line.sequence }
            if change.added { found.append(change.line.sequence) }
        }
        return found
    }

    @Test func aLookUpAnswersAsTheChangeLinesReadInOrderDo() throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_INDEX_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let keys: [UInt64] = [0x1, 0xabcd, 0xffff_ffff_ffff_fff0, 0x42, 0x7]
        var answers = 0
        for file in 0..<60 {
            let folder = TemporaryFolder()
            let fileSystem = FileSystem(root: folder.url.path)
            try FileManager.default.createDirectory(at: folder.file(StoreLayout.tempFolder), withIntermediateDirectories: true)
            let range = UInt64(1 + random.next() % 60)
            let sorted = (0..<(random.next() % 40)).map { _ in
                OutboxEntityIndex.Line(key: keys[Int(random.next() % UInt64(keys.count))], sequence: 1 + random.next() % range)
            }
            try OutboxEntityIndex.write(sorted, generation: 1, to: fileSystem)
            var changes: [(added: Bool, line: OutboxEntityIndex.Line)] = []
            var generation: UInt64 = 1
            // A few checkpoints' appends, up to the most a file may hold.
            for _ in 0..<(random.next() % 5) {
                let batch = (0..<(random.next() % 300)).map { _ -> (added: Bool, line: OutboxEntityIndex.Line) in
                    let added = random.next() % 2 == 0
                    let key = added || random.next() % 3 != 0 ? keys[Int(random.next() % UInt64(keys.count))] : 0
                    return (added, OutboxEntityIndex.Line(key: key, sequence: 1 + random.next() % range))
                }
                try OutboxEntityIndex.append(batch, in: fileSystem, from: generation, to: generation + 1)
                changes += batch
                generation += 1
            }
            let index = try #require(try OutboxEntityIndex.open(in: fileSystem, generation: generation), "file \(file) (seed \(seed))")
            #expect(index.changes.count == changes.count)
            for key in keys + [0, 0x99] {
                let expected = Self.model(sorted: sorted, changes: changes, key: key)
                let answer = try index.sequences(key: key)
                #expect(answer == expected, "file \(file), key \(String(key, radix: 16)), \(sorted.count) lines, \(changes.count) changes (seed \(seed))")
                if !expected.isEmpty { answers += 1 }
            }
        }
        print("EntityIndexChangesTests seed \(seed): 60 files, \(answers) non-empty answers checked against the lines read in order")
        #expect(answers >= 60, "too few keys with commands (seed \(seed))")
    }
}
