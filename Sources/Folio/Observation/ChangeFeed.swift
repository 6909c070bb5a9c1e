internal import Foundation

/// The change feed: everything the store keeps for its observers, in one place.
///
/// It owns whether anyone observes (tracking is on only then: noting a change costs work, every
/// partition a record touches is loaded first, so nothing is noted and nothing accumulates while
/// nobody listens), the change sets noted and not yet delivered, the subscribers they go to, the
/// folder watcher (or the polling task where the platform has none) that notices outside
/// changes, what each partition last announced when its file may still catch up, whether
/// another process checkpointed records this process never read, and the stray files already
/// reported. What a record or a reload changed is worked out by the store
/// (StoreEngine+Changes.swift); the feed keeps the result until it is delivered.
///
/// The ``Store`` actor owns the feed, and the store's state notes changes in it; it outlives a
/// state rebuilt after a failed sync (``stateReplaced()``). Used only from the actor.
final class ChangeFeed {
    /// Whether someone observes the store, so changes are noted.
    private(set) var isTracking = false
    /// The changes noted and not yet delivered, in the order they happened.
    private var recorded: [ChangeSet] = []
    /// This process's changes taken for delivery whose commit then failed (never delivered).
    private var failed: [ChangeSet] = []
    /// Whether another process checkpointed records this process never saw: files that changed
    /// then are its doing, not an outside edit. Cleared after each read.
    private(set) var missedOtherProcessRecords = false
    /// Per partition, the entities observers were last told of, while its file may still catch
    /// up (another process's checkpoint reset the journal before writing it): a reload announces
    /// what changed against this, not against the file.
    private var announced: [PartitionAddress: [String: JSONValue]] = [:]
    /// Per partition, what observers were told of the entities this process's commits whose
    /// journal sync failed changed: their values without those commits (absent: none).
    private var toldBeforeFailure: [PartitionAddress: (values: [String: JSONValue], ids: Set<String>)] = [:]
    /// Files that are not data, already reported to the log.
    private var reportedStrays: Set<String> = []
    /// The change streams.
    private var subscribers: [UUID: AsyncStream<ChangeSet>.Continuation] = [:]
    /// What notices changes made to the folder outside this process, while someone observes.
    private var watcher: FolderWatcher?
    private var pollTask: Task<Void, Never>?

    // MARK: Tracking

    /// Starts noting changes (the first observer subscribed).
    func start() {
        isTracking = true
    }

    /// Stops noting changes, and drops those not delivered and what partitions announced (the
    /// last observer left).
    func stop() {
        isTracking = false
        recorded = []
        announced = [:]
    }

    /// The store's state was rebuilt from the disk: what the old one noted of its partitions is
    /// gone with it. Tracking and subscribers stay.
    /// - Returns: What the old state noted of other processes' commits and did not deliver (a
    ///   checkpoint read them, then failed): they happened, and the rebuilt state holds them
    ///   already, so only these change sets can still tell observers.
    func stateReplaced() -> [ChangeSet] {
        let undelivered = recorded.filter { $0.origin == .otherProcess }
        recorded = []
        failed = []
        announced = [:]
        toldBeforeFailure = [:]
        missedOtherProcessRecords = false
        return undelivered
    }

    /// Keeps what observers were told of `ids` in a partition before this process's commits
    /// that never became durable changed them (``told(beforeFailureIn:)``), unless kept already.
    func keepToldBeforeFailure(_ values: [String: JSONValue], ids: Set<String>, in address: PartitionAddress) {
        guard isTracking else { return }
        var kept = toldBeforeFailure[address] ?? ([:], [])
        for id in ids where !kept.ids.contains(id) {
            kept.ids.insert(id)
            kept.values[id] = values[id]
        }
        toldBeforeFailure[address] = kept
    }

    /// What observers were told of the entities of a partition that failed commits changed.
    func told(beforeFailureIn address: PartitionAddress) -> (values: [String: JSONValue], ids: Set<String>)? {
        toldBeforeFailure[address]
    }

    /// A commit failed after its changes were taken for delivery: this process's changes in them
    /// never happened and are kept aside (``failedChanges``) for the state rebuilt next; what
    /// they hold of other processes' commits did happen.
    /// - Returns: The change sets of other processes' commits, to deliver all the same.
    func commitFailed(taken: [ChangeSet]) -> [ChangeSet] {
        failed += taken.filter { $0.origin != .otherProcess }
        return taken.filter { $0.origin == .otherProcess }
    }

    /// The entities, by collection, that this process's failed commits changed in memory: noted
    /// and not delivered, or taken and failed. The state rebuilt after the failure has them as
    /// the disk says, and observers were never told otherwise.
    var failedChanges: [String: Set<String>] {
        var result: [String: Set<String>] = [:]
        for changeSet in failed + recorded where changeSet.origin != .otherProcess {
            result[changeSet.collection, default: []].formUnion(changeSet.ids)
        }
        return result
    }

    /// Runs `body` with nothing noted: a state rebuilt from the disk takes in again what the old
    /// one had already announced.
    func withoutTracking<T>(_ body: () throws(FolioError) -> T) throws(FolioError) -> T {
        let wasTracking = isTracking
        isTracking = false
        defer { isTracking = wasTracking }
        return try body()
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
        defer { recorded = [] }
        return ChangeSet.merging(recorded)
    }

    // MARK: What partitions announced

    /// Keeps what observers were told a partition holds, while tracking, unless it keeps one
    /// already (the first is what they were told).
    func keepAnnouncement(_ entities: [String: JSONValue], of address: PartitionAddress) {
        guard isTracking, announced[address] == nil else { return }
        announced[address] = entities
    }

    /// A record's change was noted for observers and applied: a pending announcement of its
    /// partition now includes it (a reload must not announce it again).
    func applied(_ change: JournalRecord.Change) {
        guard isTracking, !announced.isEmpty, announced[change.address] != nil else { return }
        announced[change.address]?[change.id] = change.entity
    }

    /// What observers were last told the partition holds, if its file may still catch up.
    func announcement(of address: PartitionAddress) -> [String: JSONValue]? {
        announced[address]
    }

    /// Takes the partition's announcement out: what changed against it is being noted.
    func takeAnnouncement(of address: PartitionAddress) -> [String: JSONValue]? {
        announced.removeValue(forKey: address)
    }

    // MARK: Strays

    /// Whether a stray file is reported for the first time (then it counts as reported).
    func isFirstReport(ofStray path: String) -> Bool {
        reportedStrays.insert(path).inserted
    }

    // MARK: Subscribers

    /// How many change streams are open.
    var subscriberCount: Int { subscribers.count }

    /// Adds a change stream.
    /// - Returns: The token that removes it.
    func subscribe(_ continuation: AsyncStream<ChangeSet>.Continuation) -> UUID {
        let token = UUID()
        subscribers[token] = continuation
        return token
    }

    /// Removes a change stream.
    /// - Returns: Whether none is left.
    func unsubscribe(_ token: UUID) -> Bool {
        subscribers[token] = nil
        return subscribers.isEmpty
    }

    /// Hands change sets to every stream, in order.
    func deliver(_ changeSets: [ChangeSet]) {
        for changeSet in changeSets {
            for continuation in subscribers.values { continuation.yield(changeSet) }
        }
    }

    /// Ends every change stream (the store is closing).
    func finishStreams() {
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }

    // MARK: Watching the folder

    /// Whether a folder watcher runs.
    var isWatching: Bool { watcher != nil }

    /// Starts noticing changes made to the folder at `root` outside this process: a folder
    /// watcher, and polling every `interval` where the watcher cannot see everything.
    /// - Parameters:
    ///   - onChange: Called with the paths that changed (nil: anywhere).
    ///   - onProblem: Called when the watcher cannot watch part of the folder.
    ///   - poll: Looks everywhere; one poll ends before the next interval starts.
    func watch(
        root: String, interval: Duration, onChange: @escaping @Sendable (Set<String>?) -> Void,
        onProblem: @escaping @Sendable (String) -> Void, poll: @escaping @Sendable () async -> Void
    ) {
        watcher = FolderWatcher(root: root, onChange: onChange, onProblem: onProblem)
        if watcher?.isComplete != true {
            pollTask = Task {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: interval) } catch { return }
                    await poll()
                }
            }
        }
    }

    /// Stops the watcher but keeps it as watching (tests that make the store notice changes only
    /// when a read looks).
    func silenceWatcher() {
        watcher?.stop()
    }

    /// Stops noticing outside changes.
    func stopWatching() {
        watcher?.stop()
        watcher = nil
        pollTask?.cancel()
        pollTask = nil
    }
}
