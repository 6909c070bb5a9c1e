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
        /// Pulls (by id, by partition, the feed) without their owner filter.
        case noOwnerFilter = "no-owner-filter"
    }

    /// Idempotency records forgotten per statement.
    static let forgetBatch = 1_000

    let settings: PostgresSettings
    let runner: TransactionRunner
    let client: PostgresClient
    private let running: Task<Void, Never>
    let fault: Fault?
    var logger: Logger { runner.logger }

    /// Connects, creates or upgrades the tables, and returns the storage.
    /// - Parameters:
    ///   - settings: Where to connect.
    ///   - poolSize: The most connections this process opens.
    ///   - isolation: The isolation level of the push transactions.
    ///   - fault: A deliberately broken behaviour, for tests.
    ///   - logger: Where the storage and PostgresNIO log.
    /// - Throws: ``StorageError`` when the database cannot be reached in 30 s or its schema is
    ///   newer than this server's; the database's errors.
    static func open(
        _ settings: PostgresSettings, poolSize: Int, isolation: TransactionRunner.Isolation,
        fault: Fault? = nil, logger: Logger
    ) async throws -> PostgresStorage {
        var configuration: PostgresClient.Configuration
        if settings.usesUnixSocket {
            configuration = .init(
                unixSocketPath: settings.unixSocketPath, username: settings.user, password: settings.password,
                database: settings.database)
        } else {
            let tls: PostgresClient.Configuration.TLS =
                switch settings.tls {
                case .disable: .disable
                case .prefer: .prefer(.makeClientConfiguration())
                case .require: .require(.makeClientConfiguration())
                }
            configuration = .init(
                host: settings.host, port: settings.port, username: settings.user, password: settings.password,
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
        let storage = PostgresStorage(
            settings: settings, client: client, running: running, fault: fault,
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
            configuration = .init(
                unixSocketPath: settings.unixSocketPath, username: settings.user, password: settings.password,
                database: settings.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS =
                switch settings.tls {
                case .disable: .disable
                case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
            configuration = .init(
                host: settings.host, port: settings.port, username: settings.user, password: settings.password,
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

    // MARK: Upkeep

    func forgetIdempotencyRecords(through lastExpiredDay: String) async throws -> Int {
        var forgotten = 0
        // Bounded batches, each its own statement: no long lock, no huge transaction.
        for _ in 0..<10_000 {
            var count = 0
            for try await _ in try await client.query(
                """
                DELETE FROM folio_idempotency WHERE (owner, key) IN (
                    SELECT owner, key FROM folio_idempotency WHERE stored_day <= \(lastExpiredDay) LIMIT \(Int64(Self.forgetBatch)))
                RETURNING key
                """, logger: logger
            ).decode(String.self) {
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
