/// Query observation: a query's result now, then again after each change that alters it.
extension Store {
    /// The query's result at once, then a new result after each change that alters it: this
    /// process's writes, the sync engine's, other processes', outside edits of the files.
    ///
    /// ```swift
    /// for try await todos in store.observe(Query<Todo>(.day("2026-11-22"))) {
    ///     render(todos)
    /// }
    /// ```
    ///
    /// A change re-runs the query only if it touches the query's collection and selected
    /// partitions, and a result equal to the previous one is not yielded again, so unrelated
    /// changes yield nothing. A slow consumer gets the latest result, not a backlog. Stop iterating
    /// (or cancel the task) to end the observation; it ends by itself when the store closes.
    /// - Parameter query: The query to keep answering.
    /// - Returns: The successive results. It throws if the query fails (e.g. a selected file
    ///   that was never read successfully is broken), then ends.
    public nonisolated func observe<E: Entity>(_ query: Query<E>) -> AsyncThrowingStream<[E], any Error> {
        observeResults(query, includingSyncStatus: false) { engine throws(FolioError) in
            let entities = try engine.fetch(query)
            return (entities, try engine.fingerprint(of: entities))
        }
    }

    /// Like ``observe(_:)``, with each entity's sync status: a new result also comes when an
    /// entity's commands are queued, acknowledged or fail.
    ///
    /// ```swift
    /// for try await rows in store.observeWithSyncStatus(Query<Todo>(.day("2026-11-22"))) {
    ///     for row in rows { print(row.entity.title, row.syncStatus.hasPendingWrites ? "⏳" : "✓") }
    /// }
    /// ```
    /// - Parameter query: The query to keep answering.
    /// - Returns: The successive results, each entity with its ``EntitySyncStatus``.
    public nonisolated func observeWithSyncStatus<E: Entity>(_ query: Query<E>) -> AsyncThrowingStream<[WithSyncStatus<E>], any Error> {
        observeResults(query, includingSyncStatus: true) { engine throws(FolioError) in
            let rows = try engine.withSyncStatus(try engine.fetch(query))
            return (rows, try engine.fingerprint(of: rows.map(\.entity)) + rows.map { .string($0.syncStatus.description) })
        }
    }

    private nonisolated func observeResults<E: Entity, Result: Sendable>(
        _ query: Query<E>, includingSyncStatus: Bool,
        _ evaluate: @escaping @Sendable (StoreEngine) throws(FolioError) -> (Result, [JSONValue])
    ) -> AsyncThrowingStream<Result, any Error> {
        AsyncThrowingStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                do {
                    // Subscribe first: a change between the first answer and the subscription
                    // would otherwise be missed.
                    let changes = await self.changes()
                    var last = try await self.evaluate(evaluate)
                    continuation.yield(last.result)
                    for await change in changes {
                        guard change.collection == E.collection,
                            change.changesEntities || (includingSyncStatus && !change.syncStatusChanged.isEmpty),
                            change.partitions.isEmpty || change.partitions.contains(where: query.selection.contains(partitionKey:))
                        else { continue }
                        let next = try await self.evaluate(evaluate)
                        guard next.fingerprint != last.fingerprint else { continue }
                        last = next
                        continuation.yield(next.result)
                    }
                    continuation.finish()
                } catch let error as FolioError where error.code == .storeClosed {
                    continuation.finish()   // the store closed meanwhile: a normal end
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Runs `evaluate` as a read: the result, and a fingerprint of it (its entities' JSON, and
    /// their statuses) to tell a new result from a repeat for types that need not be Equatable.
    private func evaluate<Result>(_ evaluate: (StoreEngine) throws(FolioError) -> (Result, [JSONValue])) async throws
        -> (result: Result, fingerprint: [JSONValue])
    {
        try await read { engine throws(FolioError) in try evaluate(engine) }
    }
}
