@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The change feed alone (Observation/ChangeFeed.swift), without a store: what it keeps,
/// what it drops, and what it hands over. The expected deliveries come from a small model of
/// what a change set means (each entity existed or not before, exists or not after), not from
/// the tracker's merge.
@Suite struct ChangeFeedTests {
    @Test func notesNothingUntilStartedAndDropsWhatIsUndeliveredWhenStopped() {
        let tracker = ChangeFeed()
        tracker.record(ChangeSet(collection: "todos", inserted: ["a"], origin: .thisProcess))
        tracker.noteMissedOtherProcessRecords()
        #expect(tracker.take().isEmpty)
        #expect(tracker.outsideOrigin == .outsideEdit)

        tracker.start()
        tracker.record(ChangeSet(collection: "todos", inserted: ["b"], origin: .thisProcess))
        tracker.record(ChangeSet(collection: "todos", origin: .thisProcess))
        #expect(tracker.take() == [ChangeSet(collection: "todos", inserted: ["b"], origin: .thisProcess)])
        #expect(tracker.take().isEmpty, "a change is handed over once")

        tracker.record(ChangeSet(collection: "todos", updated: ["b"], origin: .sync))
        tracker.stop()
        #expect(!tracker.isTracking)
        tracker.start()
        #expect(tracker.take().isEmpty, "stopping drops what was not delivered")
    }

    @Test func missedRecordsMakeOutsideChangesAnotherProcesssUntilCleared() {
        let tracker = ChangeFeed()
        tracker.start()
        #expect(tracker.outsideOrigin == .outsideEdit)
        tracker.noteMissedOtherProcessRecords()
        #expect(tracker.outsideOrigin == .otherProcess)
        tracker.clearMissedOtherProcessRecords()
        #expect(tracker.outsideOrigin == .outsideEdit)
    }

    /// One entity's life: whether it exists.
    private enum Event { case insert, update, delete }

    /// Random change sets over two collections, three origins and a few ids, each consistent
    /// with the entities' existence so far. The model: per collection, consecutive change sets
    /// of one origin are one delivery (a change of another origin to the collection in between
    /// splits them; other collections do not), in the order of their first change; an entity
    /// in it is inserted if it did not exist before the first and does after the last, deleted
    /// in the opposite case, updated if it existed before and after, absent if neither (unless
    /// its sync status changed).
    @Test func deliveriesMatchTheNetChangeOfEachRun() {
        let seed = ProcessInfo.processInfo.environment["FOLIO_TRACKER_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let collections = ["notes", "todos"]
        let origins: [ChangeSet.Origin] = [.thisProcess, .sync, .otherProcess]
        let ids = ["a", "b", "c", "d", "e"]
        var deliveries = 0
        for round in 0..<200 {
            let tracker = ChangeFeed()
            tracker.start()
            var exists: [String: Set<String>] = [:]
            // The model's runs: collection, origin, position of the first change set, and per
            // id its existence before the run and its events; open run per collection.
            struct Run {
                var collection: String; var origin: ChangeSet.Origin; var first: Int
                var before: [String: Bool] = [:]; var after: [String: Bool] = [:]
                var statusChanged: Set<String> = []; var partitions: Set<String> = []
            }
            var runs: [Run] = []
            var open: [String: Int] = [:]
            for position in 0..<Int(random.next() % 12) {
                let collection = collections[Int(random.next() % 2)]
                let origin = origins[Int(random.next() % 3)]
                var changeSet = ChangeSet(collection: collection, origin: origin)
                let partition = "2026-11-\(10 + random.next() % 3)"
                changeSet.partitions = [partition]
                var events: [(id: String, existed: Bool, exists: Bool)] = []
                for id in ids where random.next() % 3 == 0 {
                    let existed = exists[collection, default: []].contains(id)
                    let event: Event = existed ? (random.next() % 2 == 0 ? .update : .delete) : .insert
                    switch event {
                    case .insert: changeSet.inserted.insert(id); exists[collection, default: []].insert(id)
                    case .update: changeSet.updated.insert(id)
                    case .delete: changeSet.deleted.insert(id); exists[collection, default: []].remove(id)
                    }
                    events.append((id, existed, event != .delete))
                }
                if random.next() % 4 == 0, let id = ids.randomElement(using: &random) { changeSet.syncStatusChanged.insert(id) }
                tracker.record(changeSet)
                // A change set that names no entity is not noted: it neither starts nor splits a run.
                guard !changeSet.ids.isEmpty else { continue }
                if let index = open[collection], runs[index].origin == origin {
                } else {
                    runs.append(Run(collection: collection, origin: origin, first: position))
                    open[collection] = runs.count - 1
                }
                let run = open[collection]!
                runs[run].partitions.insert(partition)
                runs[run].statusChanged.formUnion(changeSet.syncStatusChanged)
                for event in events {
                    if runs[run].before[event.id] == nil { runs[run].before[event.id] = event.existed }
                    runs[run].after[event.id] = event.exists
                }
            }
            var expected: [ChangeSet] = []
            for run in runs.sorted(by: { $0.first < $1.first }) {
                var changeSet = ChangeSet(
                    collection: run.collection, syncStatusChanged: run.statusChanged,
                    partitions: run.partitions, origin: run.origin)
                for (id, before) in run.before {
                    switch (before, run.after[id]!) {
                    case (false, true): changeSet.inserted.insert(id)
                    case (true, false): changeSet.deleted.insert(id)
                    case (true, true): changeSet.updated.insert(id)
                    case (false, false): break
                    }
                }
                if !changeSet.ids.isEmpty { expected.append(changeSet) }
            }
            let delivered = tracker.take()
            deliveries += delivered.count
            #expect(delivered == expected, "seed \(seed), round \(round)")
            if delivered != expected { break }
        }
        print("ChangeFeedTests seed \(seed): 200 rounds, \(deliveries) deliveries matched the model")
    }
}
