/// The journal syncs that make this process's commits durable (ARCHITECTURE.md, "A commit: the path of a
/// write", step 6): what is known durable, whether a sync runs, and who waits for one.
///
/// A writer alone (no sync running, no other writer of the process holding or awaiting the turn,
/// none on its way) syncs the journal itself, on its own thread: one `fdatasync`, no task to start
/// and no hop back (``canSyncAlone(othersArriving:)``). Otherwise its sync runs in a task of its
/// own while later writers append, and they share the next one (group commit). Writers whose
/// tasks have not started yet (every thread of the pool busy) cannot be counted: a writer about
/// to sync alone yields once first to let them in (``shouldLookForOthers()``), and after a yield
/// that found nobody, only once every ``lookInterval`` commits.
///
/// Owned by the ``Store`` actor: plain state, no locking of its own.
struct GroupCommit {
    typealias Waiter = (end: Int64, continuation: CheckedContinuation<Void, any Error>)

    /// The journal offset up to which every appended record is known to be durable.
    private(set) var durableEnd: Int64 = 0
    /// Whether a sync runs in its task.
    private(set) var syncInProgress = false
    private var waiters: [Waiter] = []
    /// Commits left that sync alone without first yielding to look for other writers.
    private var yieldsSkipped = 0

    /// How many commits skip the look after one that found no other writer: a writer committing
    /// in a loop pays for a yield (about one context switch) once in this many commits.
    static let lookInterval = 64

    /// A writer about to sync alone yields to look for others: its record awaits a sync.
    private(set) var isLooking = false

    /// No sync runs, no writer waits for one, none is about to sync alone: no appended record of
    /// this process awaits its sync (the flock may go).
    var isIdle: Bool { !syncInProgress && waiters.isEmpty && !isLooking }

    /// Whether a sync runs or writers wait for one.
    var isSyncing: Bool { syncInProgress || !waiters.isEmpty }

    /// Whether a sync is due: writers wait and none runs.
    var needsSync: Bool { !syncInProgress && !waiters.isEmpty }

    /// Whether a commit may sync on its own thread: no sync runs, nobody waits for one, and no
    /// other writer is on its way (`othersArriving`), who could share a sync run in a task.
    func canSyncAlone(othersArriving: Bool) -> Bool {
        isIdle && !othersArriving
    }

    /// Whether a commit about to sync alone should first yield once, so that writers whose tasks
    /// have not run yet (every thread busy) can reach `write`: yes, unless a recent look found
    /// nobody (then once every ``lookInterval`` commits).
    mutating func shouldLookForOthers() -> Bool {
        guard yieldsSkipped == 0 else {
            yieldsSkipped -= 1
            return false
        }
        isLooking = true
        return true
    }

    /// What the look found: others keep every commit looking; nobody spares the next ones.
    mutating func lookedForOthers(found: Bool) {
        isLooking = false
        yieldsSkipped = found ? 0 : Self.lookInterval - 1
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
