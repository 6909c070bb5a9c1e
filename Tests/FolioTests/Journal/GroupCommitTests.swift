@testable import Folio
import Testing

/// The group commit's bookkeeping alone, without a store.
@Suite struct GroupCommitTests {
    @Test func aWriterAloneMaySyncItselfAndOthersMakeItShare() {
        var group = GroupCommit()
        #expect(group.canSyncAlone(othersArriving: false))
        #expect(!group.canSyncAlone(othersArriving: true))
        group.begin()
        #expect(!group.canSyncAlone(othersArriving: false), "a sync runs: join it")
        #expect(group.synced(through: 100).isEmpty)
        #expect(group.covers(100) && !group.covers(101))
        #expect(group.canSyncAlone(othersArriving: false))
    }

    @Test func aLookThatFindsNobodySparesTheNextOnes() {
        var group = GroupCommit()
        let firstLook = group.shouldLookForOthers()
        #expect(firstLook)
        #expect(!group.isIdle, "a writer looking for others still awaits its sync: the flock stays")
        group.lookedForOthers(found: false)
        #expect(group.isIdle)
        var looks = 0
        for _ in 0..<(GroupCommit.lookInterval * 2) where group.shouldLookForOthers() {
            looks += 1
            group.lookedForOthers(found: false)
        }
        #expect(looks == 2, "once every \(GroupCommit.lookInterval) commits: \(looks)")
        group.lookedForOthers(found: true)
        let first = group.shouldLookForOthers()
        let second = group.shouldLookForOthers()
        #expect(first && second, "others found: every commit looks")
    }
}
