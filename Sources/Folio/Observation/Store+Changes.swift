internal import Foundation

/// Observing the store: the change stream, and the machinery that notices changes made outside
/// this process.
extension Store {
    /// A stream of what changes in the store, from now on: this process's writes, the sync
    /// engine's, other processes' (a widget, the `folio` tool) and edits made to the files by
    /// anything else (a text editor, rsync).
    ///
    /// ```swift
    /// for await change in await store.changes() where change.collection == Todo.collection {
    ///     print(change)   // todos (otherProcess): + 7F3A…
    /// }
    /// ```
    ///
    /// A write of this process is announced once it is committed (durable, with
    /// ``Durability/full``); changes made elsewhere are announced soon after they reach the disk
    /// (at once where the platform has a file-system watcher, inotify on Linux; otherwise within
    /// ``Configuration/outsideChangePollInterval``). Nothing is missed and nothing is announced
    /// twice; consecutive changes of one collection and origin may come as one change set.
    /// The stream ends when the store is closed; stop iterating to unsubscribe.
    /// - Returns: The change sets, in the order they happened.
    public func changes() -> AsyncStream<ChangeSet> {
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeSet.self)
        guard !isClosed else {
            continuation.finish()
            return stream
        }
        let token = feed.subscribe(continuation)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(token) }
        }
        startTrackingChanges()
        return stream
    }

    /// Whether changes are being tracked (someone observes), and a watcher runs.
    var isTrackingChanges: Bool { feed.isTracking }
    var isWatching: Bool { feed.isWatching }
    var subscriberCount: Int { feed.subscriberCount }

    /// Stops the folder watcher while observation goes on (for tests: changes are then noticed
    /// only when a read looks).
    func silenceWatcher() { feed.silenceWatcher() }

    private func unsubscribe(_ token: UUID) {
        if feed.unsubscribe(token) { stopTrackingChanges() }
    }

    private func startTrackingChanges() {
        guard !feed.isTracking else { return }
        engine.startTrackingChanges()
        let interval = configuration.outsideChangePollInterval
        feed.watch(root: fileSystem.root, interval: interval) { [weak self] paths in
            Task { await self?.noticeOutsideChanges(paths) }
        } onProblem: { [weak self] problem in
            Task { await self?.report(.warning, "\(problem); outside changes there are noticed only by polling, every \(interval)") }
        } poll: { [weak self] in
            await self?.noticeOutsideChanges(nil)
        }
    }

    func stopTrackingChanges() {
        feed.stopWatching()
        engine.stopTrackingChanges()
    }

    /// Ends every change stream (the store is closing).
    func finishChangeStreams() {
        stopTrackingChanges()
        feed.finishStreams()
    }

    /// Hands the changes noted so far to the subscribers.
    func publishChanges() {
        feed.deliver(feed.take())
    }

    /// Files changed on disk (the watcher says where, nil meaning anywhere): read the journal for
    /// other processes' commits, and reload the files that really changed.
    func noticeOutsideChanges(_ paths: Set<String>?) async {
        guard !isClosed, feed.isTracking else { return }
        engine.report(.debug, "the folder watcher noticed " + (paths.map { $0.sorted().joined(separator: ", ") } ?? "a change anywhere"))
        do {
            try await read { engine throws(FolioError) in try engine.checkOutsideChanges(paths) }
        } catch {
            engine.report(.warning, "could not check the folder for outside changes: \(error)")
        }
    }
}
