/// Writing: transactions, group commit, checkpoints.
///
/// The path of a `write`:
/// 1. Take this process's writer turn, then the writers' flock (other processes wait here).
/// 2. Read the journal records other processes committed meanwhile.
/// 3. Run the block against that state; its changes are staged in the ``Transaction``.
/// 4. Append one record with all the changes to the journal (`pwrite`); apply it in memory.
/// 5. Hand the turn to the next writer of this process, and wait for a journal sync that covers
///    the record: the commit point. Writers that appended while a sync ran share the next one
///    (group commit). The flock is released when no append awaits a sync.
/// 6. Return. Files catch up at the next checkpoint.
extension Store {
    /// Runs `body` as one transaction: all its changes happen, or none.
    ///
    /// If `body` throws, nothing changes and the error is rethrown. With ``Durability/full`` (the
    /// default), the changes are durable when this returns: a crash or power cut at any later
    /// instant keeps them. If this throws an I/O error, the transaction did not happen.
    ///
    /// `body` runs inside the store, with the writers' file lock held: keep it short and do not
    /// call the store from it (use the transaction's `get` and `fetch`).
    /// - Parameter body: Reads and stages changes through the transaction it receives.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or a ``FolioError`` if the commit failed.
    @discardableResult
    public nonisolated func write<R: Sendable>(_ body: @Sendable (Transaction) throws -> R) async throws -> R {
        // Counted before the hop onto the actor: a writer about to sync sees that another is on
        // its way and lets it share the sync (group commit).
        arrivals.arrive()
        return try await writeArrived(body)
    }

    private func writeArrived<R: Sendable>(_ body: @Sendable (Transaction) throws -> R) async throws -> R {
        try await commitWrite(arrived: true) { engine in
            let transaction = Transaction(engine: engine)
            let result = try body(transaction)
            return (result, try engine.commit(transaction))
        }
    }

    /// The write path shared by transactions and the outbox's own changes (acknowledgements,
    /// dead letters, retries): `body` runs with the writer turn and the flock held and the journal
    /// refreshed, stages its changes and appends them (returning the journal's new end, or nil
    /// if it changed nothing); this then waits for durability and schedules the checkpoint.
    /// - Parameters:
    ///   - durability: Overrides the store's durability for this commit (the sync engine's
    ///     acknowledgements are relaxed: losing one to a power cut only means sending the command
    ///     again, which the server recognizes by its idempotency key).
    ///   - arrived: The caller counted itself in ``arrivals``; it is counted out once its record
    ///     is appended (or it failed).
    func commitWrite<R>(durability: Durability? = nil, arrived: Bool = false, _ body: (StoreEngine) throws -> (R, Int64?)) async throws -> R {
        var arrived = arrived
        defer { if arrived { arrivals.depart() } }
        try refuseIfReadOnly()
        try await prepare()
        try await acquireWriterLock()
        let result: R
        let end: Int64?
        let queuedBefore = engine.queuedCommandCount
        // What the journal and the files say happened before this commit: announced whatever
        // becomes of it (a commit that fails keeps aside only what it changed itself).
        var before: [ChangeSet] = []
        do {
            try engine.refreshJournal()
            before = feed.take()
            if groupCommit.isIdle { groupCommit.markDurable(through: engine.journalEnd) }
            (result, end) = try body(engine)
        } catch {
            // After an I/O failure, reloading from disk is always safe; it matters if the journal
            // could not be cut back after a failed append.
            if let error = error as? FolioError, error.code == .io || error.code == .diskFull { needsReload = true }
            releaseWriterLock()
            feed.deliver(before)
            throw error
        }
        writerGate.leave()
        if arrived {
            arrivals.depart()
            arrived = false
        }
        // This commit's changes are announced once it is committed (durable, if it must be).
        let changes = feed.take()
        guard let end else {
            releaseExclusiveLockIfIdle()
            feed.deliver(ChangeSet.merging(before + changes))
            return result
        }
        lastCommit = .now
        lastSeenJournalPosition = journalPosition
        if (durability ?? configuration.durability) == .full {
            do { try await waitUntilDurable(end) } catch {
                feed.deliver(ChangeSet.merging(before + feed.commitFailed(taken: changes)))
                throw error
            }
        } else {
            releaseExclusiveLockIfIdle()
        }
        feed.deliver(ChangeSet.merging(before + changes))
        do {
            try await afterCommit()
        } catch {
            // The transaction is committed: a checkpoint that fails after it must not make the
            // caller believe it was not saved. The journal keeps it; the next checkpoint retries.
            engine.report(.error, "checkpoint after a commit failed (the commit stands): \(error)", path: (error as? FolioError)?.path)
        }
        notifyOutboxListenersIfQueued(since: queuedBefore)
        if engine.hasAdoptableEdits { try await adoptEdits() }
        return result
    }

    /// Brings the partition files up to date with the journal now, then empties the journal.
    /// Folio does this by itself shortly after writes stop; call it before handing the folder to
    /// a tool that reads files directly.
    /// - Throws: ``FolioError``: ``FolioError/Code/corruptFile`` if a file the journal must update
    ///   is broken (its changes stay in the journal, and are served, until the file is fixed), or
    ///   an I/O error.
    public func checkpoint() async throws {
        try refuseIfReadOnly()
        try await prepare()
        try await acquireWriterLock()
        defer { releaseWriterLock() }
        try await checkpointHoldingWriterLock()
    }

    /// The checkpoint itself; the caller holds the writer turn and the flock.
    func checkpointHoldingWriterLock() async throws {
        // Let syncs in flight finish first: the reset must not pull the journal from under them.
        if !groupCommit.isIdle { try await waitUntilDurable(engine.journalEnd) }
        let outcome: StoreEngine.CheckpointOutcome
        do {
            outcome = try engine.checkpoint()
        } catch {
            needsReload = true
            throw error
        }
        groupCommit.markDurable(through: engine.journalEnd)
        lastSeenJournalPosition = journalPosition
        publishChanges()
        if let blocked = outcome.blocked.first { throw blocked }
    }

    // MARK: Locks

    /// Takes this process's writer turn, then the flock.
    func acquireWriterLock() async throws {
        if !writerGate.tryEnter() {
            await withCheckedContinuation { writerGate.enqueue($0) }
        }
        if !holdsExclusiveLock {
            do {
                try await lock.acquire(exclusive: true)
            } catch {
                writerGate.leave()
                throw error
            }
            holdsExclusiveLock = true
        }
    }

    func releaseWriterLock() {
        writerGate.leave()
        releaseExclusiveLockIfIdle()
    }

    /// Releases the flock when no writer of this process holds or awaits the turn and no append
    /// awaits its sync.
    func releaseExclusiveLockIfIdle() {
        guard holdsExclusiveLock, !writerGate.isHeld, groupCommit.isIdle else { return }
        lock.release(exclusive: true)
        holdsExclusiveLock = false
    }

    // MARK: Group commit

    /// Returns once the journal is durable up to `end`. A writer alone syncs on its own thread;
    /// otherwise the sync runs in a task and writers that append meanwhile share the next one.
    func waitUntilDurable(_ end: Int64) async throws {
        if groupCommit.covers(end) { return }
        if groupCommit.canSyncAlone(othersArriving: writerGate.isHeld || arrivals.count > 0) {
            // Now and then a yield first: writers whose tasks wait for a thread (a busy pool)
            // reach `write` and are counted, and then share a sync instead of each syncing alone.
            if groupCommit.shouldLookForOthers() {
                // Not idle meanwhile: the flock stays, and a checkpoint or another writer joins a sync.
                await Task.yield()
                groupCommit.lookedForOthers(found: writerGate.isHeld || arrivals.count > 0 || groupCommit.isSyncing)
                if groupCommit.covers(end) { return }
            }
            if groupCommit.canSyncAlone(othersArriving: writerGate.isHeld || arrivals.count > 0) {
                try syncAlone()
                return
            }
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            groupCommit.wait(until: end, continuation)
            startSyncIfNeeded()
        }
    }

    /// Syncs the journal on the actor's thread: nobody could share the sync, so it needs no task
    /// of its own and no hop back (one `fdatasync`, and the context switch of waiting for it).
    private func syncAlone() throws {
        let target = engine.journalEnd
        do throws(FolioError) {
            try engine.syncJournal()
        } catch {
            syncFailed(error)
            releaseExclusiveLockIfIdle()
            throw error
        }
        _ = groupCommit.synced(through: target)
        releaseExclusiveLockIfIdle()
    }

    private func startSyncIfNeeded() {
        guard groupCommit.needsSync else {
            releaseExclusiveLockIfIdle()
            return
        }
        groupCommit.begin()
        let target = engine.journalEnd
        let syncer = engine.journalSyncer
        Task.detached { [weak self] in
            let outcome = Result { () throws(FolioError) in try syncer.sync() }
            await self?.finishSync(target: target, outcome: outcome)
        }
    }

    private func finishSync(target: Int64, outcome: Result<Void, FolioError>) {
        switch outcome {
        case .success:
            for waiter in groupCommit.synced(through: target) { waiter.continuation.resume() }
        case .failure(let error):
            syncFailed(error)
        }
        startSyncIfNeeded()
    }

    /// A failed sync is never retried: what reached the disk is unknown. Cuts the journal back
    /// to what is known durable (this process holds the flock, so every record after that point
    /// is one of its own waiting writers'), and reloads from disk before the next operation.
    /// Every waiting writer gets the error: its transaction did not happen.
    private func syncFailed(_ error: FolioError) {
        let waiters = groupCommit.failed()
        // Before anything else reads the journal: its records past the durable end never happened.
        engine.neverDurable(past: groupCommit.durableEnd)
        do {
            try engine.truncateJournal(to: max(groupCommit.durableEnd, Int64(Journal.headerSize)))
            try engine.syncJournal()
        } catch {
            engine.report(.error, "could not cut back the journal after a failed sync: \(error)", path: StoreLayout.journal)
        }
        needsReload = true
        for waiter in waiters { waiter.continuation.resume(throwing: error) }
    }

    // MARK: Checkpoint scheduling

    private func afterCommit() async throws {
        if engine.journalEnd >= Int64(configuration.checkpointThreshold) {
            try await checkpoint()
            return
        }
        guard checkpointTask == nil else { return }
        let delay = configuration.checkpointDelay
        // The task sleeps holding no reference to the store: a store released without `close()`
        // goes, and its files with it, instead of living until the delay has passed.
        checkpointTask = Task { [weak self] in
            while !Task.isCancelled {
                guard let due = await self?.idleCheckpointStep(delay: delay) else { return }
                do { try await Task.sleep(until: due, clock: .continuous) } catch { return }
            }
        }
    }

    /// One step of the idle checkpoint, which checkpoints once the journal has been quiet for
    /// `delay`: no commit from this process, and no new record from any other, for that long. So
    /// an idle checkpoint only ever applies records at least `delay` old, which is what keeps a
    /// quick plain copy of a live folder consistent (ARCHITECTURE.md, "Copies").
    /// - Returns: When to take the next step; nil when there is none (checkpointed, failed, or
    ///   the store closed).
    private func idleCheckpointStep(delay: Duration) async -> ContinuousClock.Instant? {
        if ContinuousClock.now < lastCommit + delay { return lastCommit + delay }
        guard !isClosed else { return nil }
        do {
            guard try await checkpointIfQuiet() else { return lastCommit + delay }
        } catch {
            engine.report(.error, "background checkpoint failed: \(error)")
        }
        checkpointTask = nil
        return nil
    }

    /// Checkpoints if the journal is where this process last saw it; otherwise notes that it
    /// moved (another process committed) and returns false.
    private func checkpointIfQuiet() async throws -> Bool {
        try await prepare()
        try await acquireWriterLock()
        defer { releaseWriterLock() }
        // A write of this process may have committed while this waited for the lock.
        if ContinuousClock.now < lastCommit + configuration.checkpointDelay { return false }
        try engine.refreshJournal()
        let position = journalPosition
        if position != lastSeenJournalPosition {
            lastSeenJournalPosition = position
            lastCommit = .now
            return false
        }
        try await checkpointHoldingWriterLock()
        return true
    }

    var journalPosition: JournalPosition {
        JournalPosition(generation: engine.journalHeader?.generation, offset: engine.journalEnd)
    }
}

/// Where a process last saw the end of the journal.
struct JournalPosition: Equatable {
    var generation: UInt64?
    var offset: Int64
}
