import Foundation
import Logging
import PostgresNIO

/// Pushes: the owner's row first, then everything the pushes may read, then the applier, then
/// the writes, in one transaction (see ``PostgresStorage``).
extension PostgresStorage {
    func apply(_ pushes: [Result<Push, RequestError>], for owner: Owner, now: Date) async throws -> [APIResponse] {
        let fault = fault
        return try await runner.run { connection in
            let store = PrefetchedPushStore(position: try await self.startPush(for: owner, on: connection))
            try await self.read(for: pushes, of: owner, into: store, on: connection)
            let responses = try PushApplier(store, now: now).applyAll(pushes)
            try await self.write(store, of: owner, on: connection)
            if fault == .positionsFromASequence, store.positionMoved {
                // The late commit that opens the gap: others commit higher positions meanwhile.
                try await Task.sleep(nanoseconds: UInt64.random(in: 0...30_000_000))
                try await connection.query(
                    "UPDATE folio_owners SET position = GREATEST(position, \(store.lastPositionValue)) WHERE owner = \(owner.name)",
                    logger: self.logger)
            }
            return responses
        }
    }

    /// Locks the owner's row (creating it at position 0) and returns its last position; every
    /// other push of the owner waits here until this transaction ends.
    private func startPush(for owner: Owner, on connection: PostgresConnection) async throws -> Int64 {
        if fault == .positionsFromASequence {
            try await connection.query(
                "INSERT INTO folio_owners (owner, position) VALUES (\(owner.name), 0) ON CONFLICT (owner) DO NOTHING",
                logger: logger)
            for try await next in try await connection.query("SELECT nextval('folio_broken_positions')", logger: logger).decode(Int64.self) {
                return next
            }
        }
        let rows = try await connection.query(
            """
            INSERT INTO folio_owners (owner, position) VALUES (\(owner.name), 0)
            ON CONFLICT (owner) DO UPDATE SET position = folio_owners.position
            RETURNING position
            """, logger: logger)
        for try await position in rows.decode(Int64.self) { return position }
        throw StorageError("the database returned no position for the owner \(owner)")
    }

    /// Reads everything the pushes may ask for (see ``PrefetchedPushStore``).
    private func read(
        for pushes: [Result<Push, RequestError>], of owner: Owner, into store: PrefetchedPushStore,
        on connection: PostgresConnection
    ) async throws {
        var pushesRead: [Push] = []
        for item in pushes { if case .success(let push) = item { pushesRead.append(push) } }
        var idsByKind: [CollectionKind: Set<String>] = [:]
        for push in pushesRead { idsByKind[push.kind, default: []].insert(push.id) }
        for (kind, ids) in idsByKind.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let found = try await entities(
                on: connection,
                """
                SELECT id, version, partition_key, body FROM folio_entities
                WHERE owner = \(owner.name) AND collection = \(kind.rawValue) AND id = ANY(\(Array(ids)))
                """)
            store.read(kind, ids: ids, found: found)
        }
        let keys = Array(Set(pushesRead.compactMap { $0.key?.id }))
        if !keys.isEmpty {
            store.readKeys(keys, found: try await records(of: owner, keys: keys, on: connection))
        }
        var days: Set<String> = []
        for push in pushesRead where push.kind == .todos {
            if let current = try store.entity(.todos, id: push.id), current.exists { days.insert(current.partitionKey) }
            if case .upsertTodo(let todo) = push.change { days.insert(todo.date) }
        }
        guard !days.isEmpty else { return }
        let todos = try await entities(
            on: connection,
            """
            SELECT id, version, partition_key, body FROM folio_entities
            WHERE owner = \(owner.name) AND collection = 'todos' AND partition_key = ANY(\(Array(days))) AND body IS NOT NULL
            """)
        for day in days { store.readDay(day, todos: todos.filter { $0.value.partitionKey == day }) }
        let stats = try await entities(
            on: connection,
            """
            SELECT id, version, partition_key, body FROM folio_entities
            WHERE owner = \(owner.name) AND collection = 'dailyStats' AND id = ANY(\(Array(days)))
            """)
        store.read(.dailyStats, ids: days, found: stats)
    }

    /// Stores what the pushes wrote, and the owner's new last position.
    private func write(_ store: PrefetchedPushStore, of owner: Owner, on connection: PostgresConnection) async throws {
        for key in store.written {
            guard let entity = store.writtenEntity(key) else { continue }
            let body = try entity.fields.map { try Self.text(.object($0)) }
            try await connection.query(
                """
                INSERT INTO folio_entities (owner, collection, id, partition_key, version, body)
                VALUES (\(owner.name), \(key.kind.rawValue), \(key.id), \(entity.partitionKey), \(entity.version), \(body))
                ON CONFLICT (owner, collection, id) DO UPDATE
                SET partition_key = EXCLUDED.partition_key, version = EXCLUDED.version, body = EXCLUDED.body
                """, logger: logger)
        }
        for record in store.rememberedRecords {
            let headers = try Self.text(.object(record.headers.mapValues { .string($0) }))
            let body = try record.body.map(Self.text)
            let request = try record.request.map(Self.text)
            try await connection.query(
                """
                INSERT INTO folio_idempotency (owner, key, key_text, stored_day, stored_at, method, path, status, headers, body, request)
                VALUES (\(owner.name), \(record.id), \(record.key), \(record.date), \(record.storedAt), \(record.method), \(record.path),
                        \(Int64(record.status)), \(headers), \(body), \(request))
                """, logger: logger)
        }
        if store.positionMoved, fault != .positionsFromASequence {
            try await connection.query("UPDATE folio_owners SET position = \(store.lastPositionValue) WHERE owner = \(owner.name)", logger: logger)
        }
    }
}
