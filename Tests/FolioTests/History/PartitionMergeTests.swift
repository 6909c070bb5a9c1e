@testable import Folio
import FolioCrashSupport
import Testing

/// The three-way merge of a save made from an older version, against a model of FORMAT.md's rules
/// ("Editing by hand"): the person's changes and Folio's changes since the base are two sets of
/// per-entity, per-field edits on the same base; the result holds both, the person's edit winning
/// on a field both changed, the person's side winning when one side deleted an entity the other
/// changed.
@Suite struct PartitionMergeTests {
    typealias Entity = [String: Int]   // field → value

    /// One side's edits of the base: per entity, deleted, or the fields it set.
    enum Edit { case delete, set([String: Int]) }

    @Test func randomEditsOnBothSidesAreAllKept() {
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        func roll(_ n: UInt64) -> Int { Int(random.next() % n) }
        var conflicts = 0, cases = 0
        for _ in 0..<500 {
            var base: [String: Entity] = [:]
            for id in ["a", "b", "c", "d", "e"] where roll(4) != 0 {
                base[id] = ["x": roll(5), "y": roll(5), "z": roll(5)]
            }
            func edits() -> [String: Edit] {
                var result: [String: Edit] = [:]
                for id in ["a", "b", "c", "d", "e", "f", "g"] where roll(3) == 0 {
                    if base[id] != nil, roll(4) == 0 {
                        result[id] = .delete
                    } else {
                        var fields: [String: Int] = [:]
                        for field in ["x", "y", "z", "w"] where roll(2) == 0 { fields[field] = 10 + roll(90) }
                        if fields.isEmpty { fields["x"] = 10 + roll(90) }
                        result[id] = .set(fields)
                    }
                }
                return result
            }
            let folio = edits(), person = edits()
            func applying(_ edits: [String: Edit]) -> [String: Entity] {
                var state = base
                for (id, edit) in edits {
                    switch edit {
                    case .delete: state[id] = nil
                    case .set(let fields): state[id, default: [:]].merge(fields) { $1 }
                    }
                }
                return state
            }
            let ours = applying(folio), theirs = applying(person)

            // The model, by effect: a side changed an entity (or a field) if its value differs
            // from the base's.
            var expected: [String: Entity] = [:]
            for id in Set(base.keys).union(ours.keys).union(theirs.keys) {
                let before = base[id], mine = ours[id], saved = theirs[id]
                if saved == before {
                    expected[id] = mine
                } else if mine == before || mine == saved {
                    expected[id] = saved
                } else if let mine, let saved {
                    conflicts += 1
                    var fields: Entity = [:]
                    for field in Set(mine.keys).union(saved.keys).union(before?.keys ?? [:].keys) {
                        let personChanged = before == nil ? saved[field] != nil : saved[field] != before?[field]
                        let value = personChanged ? saved[field] : (mine[field] != before?[field] ? mine[field] : before?[field])
                        fields[field] = value
                    }
                    expected[id] = fields
                } else {
                    conflicts += 1
                    expected[id] = saved   // one side deleted, the other changed: the person's side
                }
            }
            let result = PartitionMerge.merge(base: contents(base), ours: contents(ours), theirs: contents(theirs))
            cases += 1
            #expect(
                result.contents.entities == contents(expected).entities,
                "seed \(seed), case \(cases): base \(base), Folio \(ours), person \(theirs)")
            if result.contents.entities != contents(expected).entities { break }
        }
        print("partition merge: \(cases) cases, \(conflicts) entities changed on both sides (seed \(seed))")
    }

    private func contents(_ state: [String: Entity]) -> PartitionFile.Contents {
        PartitionFile.Contents(
            entities: state.mapValues { fields in
                .object(fields.mapValues { JSONValue.number(String($0)) })
            }, extra: [:])
    }
}
