@testable import Folio
import Foundation
import Testing

/// The hand edits waiting for adoption alone (Store/History/HandEdits.swift), without a store: one save
/// per partition, saves met during a compare-and-swap folded into one made against Folio's
/// version before the first, and waiting until the partition is read again.
@Suite struct HandEditsTests {
    private static func contents(_ title: String) -> PartitionFile.Contents {
        PartitionFile.Contents(entities: ["a": .object(["id": .string("a"), "title": .string(title)])], extra: [:])
    }

    private static let today = PartitionAddress(collection: "todos", granularity: .day, key: PartitionKey.day(parsing: "2026-11-22")!)
    private static let tomorrow = PartitionAddress(collection: "todos", granularity: .day, key: PartitionKey.day(parsing: "2026-11-23")!)
    private static let note = PartitionAddress(collection: "notes", granularity: .none, key: .whole)

    @Test func aSaveALoadFoundWaitsUntilTakenOnce() {
        let edits = HandEdits()
        #expect(!edits.waits(at: Self.today) && !edits.hasPending { _ in true })
        edits.note(HandEdit(folio: Self.contents("v1"), saved: Self.contents("by hand")), at: Self.tomorrow)
        edits.note(HandEdit(folio: Self.contents("v1"), saved: Self.contents("by hand")), at: Self.today)
        edits.note(HandEdit(folio: Self.contents("n1"), saved: Self.contents("n2")), at: Self.note)
        #expect(edits.waits(at: Self.today))
        #expect(edits.hasPending { $0 == "notes" } && !edits.hasPending { $0 == "drafts" })
        #expect(edits.pendingAddresses { $0 == "todos" } == [Self.today, Self.tomorrow], "in path order, of the accepted collections")
        #expect(edits.takePending(at: Self.today)?.saved == Self.contents("by hand"))
        #expect(edits.takePending(at: Self.today) == nil, "taken once")
        edits.note(nil, at: Self.tomorrow)
        #expect(!edits.waits(at: Self.tomorrow), "a load that found no save forgets the one before")
    }

    @Test func savesMetDuringACompareAndSwapAreOneEditAgainstTheFirstVersion() {
        let edits = HandEdits()
        edits.absorb(Self.contents("save 1"), madeOn: Self.contents("folio v1"), at: Self.today)
        edits.absorb(Self.contents("save 2"), madeOn: Self.contents("folio v2"), at: Self.today)
        #expect(edits.waits(at: Self.today), "an absorbed save keeps the partition")
        #expect(!edits.hasPending { _ in true }, "not adoptable before the partition is read again")
        edits.absorbedBecomePending(at: Self.today)
        let edit = edits.takePending(at: Self.today)
        #expect(edit?.folio == Self.contents("folio v1") && edit?.saved == Self.contents("save 2"))
        #expect(!edits.waits(at: Self.today))
    }

    @Test func aSaveTheReloadFoundWinsOverAbsorbedOnes() {
        let edits = HandEdits()
        edits.absorb(Self.contents("absorbed"), madeOn: Self.contents("folio v1"), at: Self.today)
        edits.note(HandEdit(folio: Self.contents("folio v1"), saved: Self.contents("found")), at: Self.today)
        edits.absorbedBecomePending(at: Self.today)
        #expect(edits.takePending(at: Self.today)?.saved == Self.contents("found"))
        #expect(edits.waits(at: Self.today), "the absorbed save waits for the next reload")
    }
}
