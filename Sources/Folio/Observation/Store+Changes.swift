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
        let token = UUID()
        changeSubscribers[token] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(token) }
        }
        startTrackingChanges()
        return stream
    }

    /// Whether changes are being tracked (someone observes), and a watcher runs.
    var isTrackingChanges: Bool { state.isTrackingChanges }
    var isWatching: Bool { watcher != nil }
    var subscriberCount: Int { changeSubscribers.count }

    private func unsubscribe(_ token: UUID) {
        changeSubscribers[token] = nil
        if changeSubscribers.isEmpty { stopTrackingChanges() }
    }

    private func reportWatcherProblem(_ text: String) {
        state.report(.warning, text)
    }

    private func startTrackingChanges() {
        guard !state.isTrackingChanges else { return }
        state.startTrackingChanges()
        let root = fileSystem.root
        watcher = FolderWatcher(root: root) { [weak self] paths in
            Task { await self?.noticeOutsideChanges(paths) }
        } onProblem: { [weak self, interval = configuration.outsideChangePollInterval] problem in
            Task { await self?.reportWatcherProblem("\(problem); outside changes there are noticed only by polling, every \(interval)") }
        }
        if watcher?.isComplete != true {
            let interval = configuration.outsideChangePollInterval
            pollTask = Task { [weak self] in
                while !Task.isCancelled {
                    do { try await Task.sleep(for: interval) } catch { return }
                    await self?.noticeOutsideChanges(nil)
                }
            }
        }
    }

    func stopTrackingChanges() {
        watcher?.stop()
        watcher = nil
        pollTask?.cancel()
        pollTask = nil
        state.stopTrackingChanges()
    }

    /// Ends every change stream (the store is closing).
    func finishChangeStreams() {
        let subscribers = changeSubscribers
        changeSubscribers = [:]
        stopTrackingChanges()
        for continuation in subscribers.values { continuation.finish() }
    }

    /// Hands the changes noted so far to the subscribers.
    func publishChanges() {
        deliver(state.takeChanges())
    }

    func deliver(_ changeSets: [ChangeSet]) {
        guard !changeSets.isEmpty else { return }
        for changeSet in changeSets {
            for continuation in changeSubscribers.values { continuation.yield(changeSet) }
        }
    }

    /// Files changed on disk (the watcher says where, nil meaning anywhere): read the journal for
    /// other processes' commits, and reload the files that really changed.
    func noticeOutsideChanges(_ paths: Set<String>?) async {
        guard !isClosed, state.isTrackingChanges else { return }
        state.report(.debug, "the folder watcher noticed " + (paths.map { $0.sorted().joined(separator: ", ") } ?? "a change anywhere"))
        do {
            try await read { state throws(FolioError) in try state.checkOutsideChanges(paths) }
        } catch {
            state.report(.warning, "could not check the folder for outside changes: \(error)")
        }
    }
}
