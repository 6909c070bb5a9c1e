/// The journal syncs that make this process's commits durable (ARCHITECTURE.md, "The path of a
/// write", step 5): what is known durable, whether a sync runs, and who waits for one.
///
/// A writer alone (no sync running, no other writer of the process holding or awaiting the turn)
/// syncs the journal itself, on its own thread: one `fdatasync`, no task to start and no hop
/// back (``canSyncAlone``). Otherwise its sync runs in a task of its own while later writers
/// append, and they share the next one (group commit).
///
/// Owned by the ``Store`` actor: plain state, no locking of its own.
struct GroupCommit {
    typealias Waiter = (end: Int64, continuation: CheckedContinuation<Void, any Error>)

    /// The journal offset up to which every appended record is known to be durable.
    private(set) var durableEnd: Int64 = 0
    /// Whether a sync runs in its task.
    private(set) var syncInProgress = false
    private var waiters: [Waiter] = []

    /// No sync runs and no writer waits for one.
    var isIdle: Bool { !syncInProgress && waiters.isEmpty }

    /// Whether a sync is due: writers wait and none runs.
    var needsSync: Bool { !syncInProgress && !waiters.isEmpty }

    /// Whether a commit may sync on its own thread: no sync runs, nobody waits for one, and no
    /// other writer is on its way (`othersArriving`), who could share a sync run in a task.
    func canSyncAlone(othersArriving: Bool) -> Bool {
        isIdle && !othersArriving
    }

    /// Whether the record ending at `end` is known durable.
    func covers(_ end: Int64) -> Bool { durableEnd >= end }

    /// Everything up to `offset` is durable (synced or checkpointed, or read from the journal
    /// while no sync of this process was pending).
    mutating func markDurable(through offset: Int64) {
        durableEnd = offset
    }

    mutating func wait(until end: Int64, _ continuation: CheckedContinuation<Void, any Error>) {
        waiters.append((end, continuation))
    }

    /// A sync starts in its task.
    mutating func begin() {
        syncInProgress = true
    }

    /// A sync covering `target` succeeded: returns the writers it made durable, to resume.
    mutating func synced(through target: Int64) -> [Waiter] {
        syncInProgress = false
        durableEnd = max(durableEnd, target)
        let ready = waiters.filter { $0.end <= target }
        waiters.removeAll { $0.end <= target }
        return ready
    }

    /// A sync failed: returns every waiting writer, to fail (what reached the disk is unknown).
    mutating func failed() -> [Waiter] {
        syncInProgress = false
        defer { waiters = [] }
        return waiters
    }
}

/// How many writers are between calling `write` and appending their record: counted outside the
/// actor, so that it includes writers still waiting to reach it.
final class WriterArrivals: @unchecked Sendable {
    private let lock = NSLockShim()
    private var value = 0

    var count: Int { lock.withLock { value } }

    func arrive() { lock.withLock { value += 1 } }

    func depart() { lock.withLock { value -= 1 } }
}
