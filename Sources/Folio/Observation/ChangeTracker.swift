/// The change sets noted for observers and not yet delivered, and whether to note any.
///
/// Tracking is on only while someone observes the store (``Store/changes()``, a query
/// observation): noting a change costs work (every partition a record touches is loaded first),
/// so nothing is noted, and nothing accumulates, while nobody listens. What a record or a reload
/// changed is worked out by the store (StoreState+Changes.swift); the tracker keeps the result
/// until the store hands it to the subscribers.
final class ChangeTracker {
    /// Whether someone observes the store, so changes are noted.
    private(set) var isTracking = false
    /// The changes noted and not yet delivered, in the order they happened.
    private var recorded: [ChangeSet] = []
    /// Whether another process checkpointed records this process never saw: files that changed
    /// then are its doing, not an outside edit. Cleared after each read.
    private(set) var missedOtherProcessRecords = false

    /// Starts noting changes (the first observer subscribed).
    func start() {
        isTracking = true
    }

    /// Stops noting changes and drops those not delivered (the last observer left).
    func stop() {
        isTracking = false
        recorded = []
    }

    /// Notes a change set, if tracking is on and it names any entity.
    func record(_ changeSet: ChangeSet) {
        guard isTracking, !changeSet.ids.isEmpty else { return }
        recorded.append(changeSet)
    }

    /// Notes that another process checkpointed records this process never read (only while
    /// tracking: nobody else asks who changed a file).
    func noteMissedOtherProcessRecords() {
        if isTracking { missedOtherProcessRecords = true }
    }

    /// Forgets the missed records (a read is over: what it found changed has been announced).
    func clearMissedOtherProcessRecords() {
        missedOtherProcessRecords = false
    }

    /// Who changed a file this process finds changed.
    var outsideOrigin: ChangeSet.Origin { missedOtherProcessRecords ? .otherProcess : .outsideEdit }

    /// The change sets noted since the last call, in order, consecutive ones of a collection and
    /// origin merged into one (never across a change of another origin to the same collection,
    /// so observers see the changes in the order they happened).
    func take() -> [ChangeSet] {
        guard !recorded.isEmpty else { return [] }
        var merged: [ChangeSet] = []
        for changeSet in recorded {
            if let index = merged.lastIndex(where: { $0.collection == changeSet.collection && $0.origin == changeSet.origin }),
               !merged[(index + 1)...].contains(where: { $0.collection == changeSet.collection }) {
                merged[index].merge(changeSet)
            } else {
                merged.append(changeSet)
            }
        }
        recorded = []
        return merged.filter { !$0.ids.isEmpty }
    }
}
