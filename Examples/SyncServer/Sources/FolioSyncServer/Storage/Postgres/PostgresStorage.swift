import Foundation
import Logging
import PostgresNIO

/// The server's data in PostgreSQL (or an engine that speaks its protocol and SQL), shared by
/// any number of server processes. See ``PostgresSchema`` for the tables.
///
/// **Positions without gaps.** The feed (`?since=`) hands out each owner's changes by position,
/// and a reader's cursor moves past positions it has read. A position taken from a sequence
/// becomes visible at commit, so a change committed late under a lower position would fall
/// behind a reader's cursor and never be read. Here every push transaction first locks its
/// owner's row in `folio_owners` (an `INSERT … ON CONFLICT DO UPDATE` that returns the last
/// position), and takes positions after it; so an owner's positions commit in order. A reader
/// reads the owner's last position first and then only changes up to it: every change up to
/// that position has committed. Only one owner's writers wait for each other.
///
/// **Reads after the lock.** Under READ COMMITTED each statement sees what was committed when
/// it began; the push reads its entities and keys in statements after the lock, so it sees
/// every earlier push of its owner. Under SERIALIZABLE (CockroachDB) a contended push fails
/// with 40001 and the ``TransactionRunner`` runs it again.
///
/// Only bound parameters reach the SQL: every value is an interpolation of `PostgresQuery`,
/// which PostgresNIO sends as a parameter, never as text.
final class PostgresStorage: SyncStorage {
    /// Deliberately broken behaviour, for the tests that must fail on it (never set in use).
    enum Fault: String, Sendable, CaseIterable {
        /// Positions from a sequence at write time, without the owner's lock: the feed gap.
        case positionsFromASequence = "sequence-positions"
        /// `GET {collection}/{id}` without its owner filter.
        case noOwnerFilter = "no-owner-filter"
    }

    /// Idempotency records forgotten per statement.
    static let forgetBatch = 1_000

    let settings: PostgresSettings
    let runner: TransactionRunner
    private let client: PostgresClient
    private let running: Task<Void, Never>
    private let fault: Fault?
    private var logger: Logger { runner.logger }

    /// Connects, creates or upgrades the tables, and returns the storage.
    /// - Parameters:
    ///   - settings: Where to connect.
    ///   - poolSize: The most connections this process opens.
    ///   - isolation: The isolation level of the push transactions.
    ///   - fault: A deliberately broken behaviour, for tests.
    ///   - logger: Where the storage and PostgresNIO log.
    /// - Throws: ``StorageError`` when the database cannot be reached in 30 s or its schema is
    ///   newer than this server's; the database's errors.
    static func open(_ settings: PostgresSettings, poolSize: Int, isolation: TransactionRunner.Isolation,
                     fault: Fault? = nil, logger: Logger) async throws -> PostgresStorage {
        var configuration: PostgresClient.Configuration
        if settings.usesUnixSocket {
            configuration = .init(unixSocketPath: settings.unixSocketPath, username: settings.user, password: settings.password,
                                  database: settings.database)
        } else {
            let tls: PostgresClient.Configuration.TLS = switch settings.tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
            configuration = .init(host: settings.host, port: settings.port, username: settings.user, password: settings.password,
                                  database: settings.database, tls: tls)
        }
        // One connection first: a wrong database, user or password is an error now, with the
        // server's own words (the pool would wait and retry).
        try await withDeadline(seconds: 30, "PostgreSQL at \(settings) did not answer in 30 s") {
            try await probe(settings, logger: logger)
        }
        configuration.options.maximumConnections = max(1, poolSize)
        configuration.options.connectTimeout = .seconds(10)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let running = Task { await client.run() }
        let storage = PostgresStorage(settings: settings, client: client, running: running, fault: fault,
                                      runner: TransactionRunner(client: client, isolation: isolation, logger: logger))
        do {
            try await withDeadline(seconds: 30, "PostgreSQL at \(settings) did not answer in 30 s") {
                _ = try await PostgresSchema.migrate(storage.runner)
                if fault == .positionsFromASequence {
                    try await client.query("CREATE SEQUENCE IF NOT EXISTS folio_broken_positions INCREMENT BY 100", logger: logger)
                }
            }
        } catch {
            running.cancel()
            await running.value
            throw StorageError("could not open the PostgreSQL storage (\(settings)): \(TransactionRunner.describe(error))")
        }
        return storage
    }

    /// Opens one connection and closes it again.
    /// - Throws: ``StorageError`` with the database's answer.
    private static func probe(_ settings: PostgresSettings, logger: Logger) async throws {
        var configuration: PostgresConnection.Configuration
        if settings.usesUnixSocket {
            configuration = .init(unixSocketPath: settings.unixSocketPath, username: settings.user, password: settings.password,
                                  database: settings.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS = switch settings.tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            configuration = .init(host: settings.host, port: settings.port, username: settings.user, password: settings.password,
                                  database: settings.database, tls: tls)
        }
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        } catch {
            throw StorageError("could not connect to PostgreSQL at \(settings): \(TransactionRunner.describe(error))")
        }
        try await connection.close()
    }

    private init(settings: PostgresSettings, client: PostgresClient, running: Task<Void, Never>, fault: Fault?, runner: TransactionRunner) {
        self.settings = settings
        self.client = client
        self.running = running
        self.fault = fault
        self.runner = runner
    }

    // MARK: Pushes

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
            try await connection.query("INSERT INTO folio_owners (owner, position) VALUES (\(owner.name), 0) ON CONFLICT (owner) DO NOTHING",
                                       logger: logger)
            for try await next in try await connection.query("SELECT nextval('folio_broken_positions')", logger: logger).decode(Int64.self) {
                return next
            }
        }
        let rows = try await connection.query("""
            INSERT INTO folio_owners (owner, position) VALUES (\(owner.name), 0)
            ON CONFLICT (owner) DO UPDATE SET position = folio_owners.position
            RETURNING position
            """, logger: logger)
        for try await position in rows.decode(Int64.self) { return position }
        throw StorageError("the database returned no position for the owner \(owner)")
    }

    /// Reads everything the pushes may ask for (see ``PrefetchedPushStore``).
    private func read(for pushes: [Result<Push, RequestError>], of owner: Owner, into store: PrefetchedPushStore,
                      on connection: PostgresConnection) async throws {
        var pushesRead: [Push] = []
        for item in pushes { if case .success(let push) = item { pushesRead.append(push) } }
        var idsByKind: [CollectionKind: Set<String>] = [:]
        for push in pushesRead { idsByKind[push.kind, default: []].insert(push.id) }
        for (kind, ids) in idsByKind.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let found = try await entities(on: connection, """
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
        let todos = try await entities(on: connection, """
            SELECT id, version, partition_key, body FROM folio_entities
            WHERE owner = \(owner.name) AND collection = 'todos' AND partition_key = ANY(\(Array(days))) AND body IS NOT NULL
            """)
        for day in days { store.readDay(day, todos: todos.filter { $0.value.partitionKey == day }) }
        let stats = try await entities(on: connection, """
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
            try await connection.query("""
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
            try await connection.query("""
                INSERT INTO folio_idempotency (owner, key, key_text, stored_day, stored_at, method, path, status, headers, body, request)
                VALUES (\(owner.name), \(record.id), \(record.key), \(record.date), \(record.storedAt), \(record.method), \(record.path),
                        \(Int64(record.status)), \(headers), \(body), \(request))
                """, logger: logger)
        }
        if store.positionMoved, fault != .positionsFromASequence {
            try await connection.query("UPDATE folio_owners SET position = \(store.lastPositionValue) WHERE owner = \(owner.name)", logger: logger)
        }
    }

    // MARK: Reads

    func entity(_ kind: CollectionKind, id: String, for owner: Owner) async throws -> APIResponse {
        let found: [String: StoredEntity]
        if fault == .noOwnerFilter {
            found = try await client.withConnection { connection in
                try await self.entities(on: connection, """
                    SELECT id, version, partition_key, body FROM folio_entities WHERE collection = \(kind.rawValue) AND id = \(id) LIMIT 1
                    """)
            }
        } else {
            found = try await client.withConnection { connection in
                try await self.entities(on: connection, """
                    SELECT id, version, partition_key, body FROM folio_entities
                    WHERE owner = \(owner.name) AND collection = \(kind.rawValue) AND id = \(id)
                    """)
            }
        }
        return ReadAnswers.entity(found[id])
    }

    func partition(_ kind: CollectionKind, key: String, for owner: Owner) async throws -> APIResponse {
        let found = try await client.withConnection { connection in
            try await self.entities(on: connection, """
                SELECT id, version, partition_key, body FROM folio_entities
                WHERE owner = \(owner.name) AND collection = \(kind.rawValue) AND partition_key = \(key) AND body IS NOT NULL
                """)
        }
        return ReadAnswers.partition(found)
    }

    func changes(_ kind: CollectionKind, after cursor: Int64, pageSize: Int, for owner: Owner) async throws -> APIResponse {
        try await client.withConnection { connection in
            // The last position first: every change up to it has committed (see the type's notes).
            var latest: Int64 = 0
            for try await position in try await connection.query(
                "SELECT position FROM folio_owners WHERE owner = \(owner.name)", logger: self.logger
            ).decode(Int64.self) {
                latest = position
            }
            let rows = try await connection.query("""
                SELECT id, version, partition_key, body FROM folio_entities
                WHERE owner = \(owner.name) AND collection = \(kind.rawValue) AND version > \(cursor) AND version <= \(latest)
                ORDER BY version LIMIT \(Int64(pageSize) + 1)
                """, logger: self.logger)
            var page: [(id: String, entity: StoredEntity)] = []
            for try await (id, version, partitionKey, body) in rows.decode((String, Int64, String, String?).self) {
                page.append((id, try Self.entity(version: version, partitionKey: partitionKey, body: body)))
            }
            let hasMore = page.count > pageSize
            return ReadAnswers.changes(Array(page.prefix(pageSize)), hasMore: hasMore, after: cursor, latest: latest)
        }
    }

    // MARK: Upkeep

    func forgetIdempotencyRecords(through lastExpiredDay: String) async throws -> Int {
        var forgotten = 0
        // Bounded batches, each its own statement: no long lock, no huge transaction.
        for _ in 0..<10_000 {
            var count = 0
            for try await _ in try await client.query("""
                DELETE FROM folio_idempotency WHERE (owner, key) IN (
                    SELECT owner, key FROM folio_idempotency WHERE stored_day <= \(lastExpiredDay) LIMIT \(Int64(Self.forgetBatch)))
                RETURNING key
                """, logger: logger).decode(String.self) {
                count += 1
            }
            forgotten += count
            if count < Self.forgetBatch { break }
        }
        return forgotten
    }

    func checkReady() async throws {
        try await withDeadline(seconds: 5, "PostgreSQL did not answer in 5 s") {
            try await self.client.query("SELECT 1", logger: self.logger)
        }
    }

    func close() async throws {
        running.cancel()
        await running.value
    }

    // MARK: Rows

    private func entities(on connection: PostgresConnection, _ query: PostgresQuery) async throws -> [String: StoredEntity] {
        var found: [String: StoredEntity] = [:]
        for try await (id, version, partitionKey, body) in try await connection.query(query, logger: logger)
            .decode((String, Int64, String, String?).self) {
            found[id] = try Self.entity(version: version, partitionKey: partitionKey, body: body)
        }
        return found
    }

    private func records(of owner: Owner, keys: [String], on connection: PostgresConnection) async throws -> [String: IdempotencyRecord] {
        let rows = try await connection.query("""
            SELECT key, key_text, stored_day, stored_at, method, path, status, headers, body, request FROM folio_idempotency
            WHERE owner = \(owner.name) AND key = ANY(\(keys))
            """, logger: logger)
        var found: [String: IdempotencyRecord] = [:]
        for try await (key, keyText, day, storedAt, method, path, status, headers, body, request)
            in rows.decode((String, String, String, Date, String, String, Int64, String, String?, String?).self) {
            guard case .object(let headerValues) = try Self.json(headers) else { throw StorageError("the headers stored with the key \(key) are not an object") }
            found[key] = IdempotencyRecord(
                id: key, key: keyText, date: day, storedAt: storedAt, method: method, path: path, status: Int(status),
                headers: headerValues.compactMapValues(\.stringValue), body: try body.map(Self.json), request: try request.map(Self.json))
        }
        return found
    }

    private static func entity(version: Int64, partitionKey: String, body: String?) throws -> StoredEntity {
        guard let body else { return StoredEntity(fields: nil, version: version, partitionKey: partitionKey) }
        guard case .object(let fields) = try json(body) else { throw StorageError("a stored entity is not a JSON object") }
        return StoredEntity(fields: fields, version: version, partitionKey: partitionKey)
    }

    /// Canonical JSON text (sorted keys): what the TEXT columns hold.
    private static func text(_ value: JSONValue) throws -> String {
        String(decoding: try JSONCoding.data(value), as: UTF8.self)
    }

    private static func json(_ text: String) throws -> JSONValue {
        do {
            return try JSONCoding.parse(Data(text.utf8))
        } catch {
            throw StorageError("the database holds JSON this server cannot read: \(error.message)")
        }
    }
}

/// Runs `operation`, or throws ``StorageError`` with `message` if it takes longer than `seconds`.
func withDeadline(seconds: Double, _ message: String, _ operation: @escaping @Sendable () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask {
            try await operation()
            return true
        }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return false
        }
        let finished = try await group.next() ?? false
        group.cancelAll()
        if !finished { throw StorageError(message) }
    }
}
