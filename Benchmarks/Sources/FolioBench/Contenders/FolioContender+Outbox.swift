import Folio
import Foundation

/// Folio's side of the outbox group (Runner+Outbox.swift), through the public API only.
extension FolioContender {
    /// Fills `folder` with the outbox group's entities: those not pending as data already on the
    /// server (local-only types, no command), then the pending ones through their push types in
    /// transactions of 20,000 (``seed(_:entities:)``), one command each. Then opened once as a
    /// store in use (its id index made current) and its outbox checked. Not timed.
    static func seedOutbox(_ folder: URL, data: OutboxData, pendingTodos: [Todo], pendingDrafts: [Draft]) async throws {
        let todoIDs = Set(pendingTodos.map(\.id))
        let draftIDs = Set(pendingDrafts.map(\.id))
        try await seed(folder, entities: data.todos.todos.filter { !todoIDs.contains($0.id) }.map(LocalTodo.init))
        try await seed(folder, entities: data.drafts.filter { !draftIDs.contains($0.id) }.map(LocalDraft.init))
        try await seed(folder, entities: pendingTodos)
        try await seed(folder, entities: pendingDrafts)
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        _ = try await store.get(Todo.self, id: "absent")
        try await checkPending(store, pendingTodos.count + pendingDrafts.count)
        try await store.close()
    }

    /// The mean time of `count` sync statuses of the todo `id` in an open store that answered once
    /// before (not timed). Each must be one pending command.
    static func syncStatuses(_ folder: URL, id: String, count: Int) async throws -> Duration {
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        try checkStatus(try await store.syncStatus(of: Todo.self, id: id), id: id)
        var last = EntitySyncStatus.synced
        let start = ContinuousClock.now
        for _ in 0..<count { last = try await store.syncStatus(of: Todo.self, id: id) }
        let elapsed = ContinuousClock.now - start
        try checkStatus(last, id: id)
        try await store.close()
        return elapsed / count
    }

    /// The first sync status of the todo `id` in a fresh process: open (not timed), then the status.
    static func firstSyncStatus(_ folder: URL, id: String) async throws -> Duration {
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        let start = ContinuousClock.now
        let status = try await store.syncStatus(of: Todo.self, id: id)
        let elapsed = ContinuousClock.now - start
        try checkStatus(status, id: id)
        try await store.close()
        return elapsed
    }

    /// One durable transaction per edit, one after the other, the first `untimed` not timed (the
    /// store's first commit, and what makes later ones coalesce); then the outbox must hold
    /// `pendingAfter` commands. Returns the mean time of the timed commits.
    static func outboxCommits(_ folder: URL, _ edits: [OutboxEdit], untimed: Int, pendingAfter: Int) async throws -> Duration {
        guard untimed >= 1, edits.count > untimed else { throw BenchError("Folio: no commit left to time after \(untimed) untimed") }
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        for edit in edits.prefix(untimed) { try await commit(edit, store) }
        let start = ContinuousClock.now
        for edit in edits.dropFirst(untimed) { try await commit(edit, store) }
        let elapsed = ContinuousClock.now - start
        try await checkPending(store, pendingAfter)
        try await store.close()
        return elapsed / (edits.count - untimed)
    }

    /// Open + one durable transaction, as a fresh process does it; then the outbox must hold
    /// `pendingAfter` commands.
    static func openAndCommit(_ folder: URL, _ edit: OutboxEdit, pendingAfter: Int) async throws -> Duration {
        let start = ContinuousClock.now
        let store = try await Store.open(at: folder, configuration: configuration(.full))
        try await commit(edit, store)
        let elapsed = ContinuousClock.now - start
        try await checkPending(store, pendingAfter)
        try await store.close()
        return elapsed
    }

    private static func commit(_ edit: OutboxEdit, _ store: Store) async throws {
        switch edit {
        case .todo(let todo): try await store.write { tx in try tx.upsert(todo) }
        case .draft(let draft): try await store.write { tx in try tx.upsert(draft) }
        }
    }

    private static func checkStatus(_ status: EntitySyncStatus, id: String) throws {
        guard status == .pending(commands: 1) else { throw BenchError("Folio: the sync status of todo \(id) is \(status), expected pending (1)") }
    }

    private static func checkPending(_ store: Store, _ expected: Int) async throws {
        let pending = try await store.pendingCommandCount()
        guard pending == expected else { throw BenchError("Folio: \(pending) outbox commands pending, expected \(expected)") }
    }
}
