import Logging
import PostgresNIO

/// The PostgreSQL storage's tables, created and upgraded by the server as it starts.
///
/// Every table's key leads with `owner`, so Citus can distribute the tables by owner and
/// CockroachDB and YugabyteDB keep an owner's rows together. Bodies are canonical JSON in TEXT
/// (not JSONB, which rewrites numbers and refuses `\u0000`). Nothing beyond portable SQL:
/// `CREATE TABLE/INDEX IF NOT EXISTS`, `INSERT … ON CONFLICT`, `SELECT … FOR UPDATE`, BIGINT,
/// TEXT, TIMESTAMPTZ. No sequences, triggers, stored procedures, LISTEN/NOTIFY or advisory locks.
///
/// ```
/// folio_schema       (component PK, version)             which migrations ran
/// folio_owners       (owner PK, position)                 each owner's last change position
/// folio_entities     (owner, collection, id) PK,          entities and tombstones (body NULL),
///                    partition_key, version, body          version = the change's position
/// folio_idempotency  (owner, key) PK, stored_day, …       remembered responses
/// ```
enum PostgresSchema {
    /// The component name in `folio_schema`.
    static let component = "folio-sync-server"

    /// The migrations, in order; version N is the first N of them. Append, never edit.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE IF NOT EXISTS folio_owners (
                owner TEXT NOT NULL PRIMARY KEY,
                position BIGINT NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS folio_entities (
                owner TEXT NOT NULL,
                collection TEXT NOT NULL,
                id TEXT NOT NULL,
                partition_key TEXT NOT NULL,
                version BIGINT NOT NULL,
                body TEXT,
                PRIMARY KEY (owner, collection, id))
            """,
            "CREATE INDEX IF NOT EXISTS folio_entities_by_partition ON folio_entities (owner, collection, partition_key)",
            "CREATE INDEX IF NOT EXISTS folio_entities_by_version ON folio_entities (owner, collection, version)",
            """
            CREATE TABLE IF NOT EXISTS folio_idempotency (
                owner TEXT NOT NULL,
                key TEXT NOT NULL,
                key_text TEXT NOT NULL,
                stored_day TEXT NOT NULL,
                stored_at TIMESTAMPTZ NOT NULL,
                method TEXT NOT NULL,
                path TEXT NOT NULL,
                status BIGINT NOT NULL,
                headers TEXT NOT NULL,
                body TEXT,
                request TEXT,
                PRIMARY KEY (owner, key))
            """,
            "CREATE INDEX IF NOT EXISTS folio_idempotency_by_day ON folio_idempotency (stored_day)",
        ]
    ]

    /// The version this server writes.
    static var currentVersion: Int64 { Int64(migrations.count) }

    /// Creates the tables, or brings them up to ``currentVersion``. Safe with several servers
    /// starting at once: the version row is locked (`FOR UPDATE`) while the migrations run, and
    /// a race on creating `folio_schema` itself is a unique violation the runner retries.
    /// - Returns: The version found before (0 for an empty database).
    /// - Throws: ``StorageError`` for a database written by a newer server; the database's errors.
    static func migrate(_ runner: TransactionRunner) async throws -> Int64 {
        let logger = runner.logger
        try await runner.run { connection in
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS folio_schema (component TEXT NOT NULL PRIMARY KEY, version BIGINT NOT NULL)", logger: logger)
        }
        return try await runner.run { connection in
            try await connection.query(
                "INSERT INTO folio_schema (component, version) VALUES (\(component), 0) ON CONFLICT (component) DO NOTHING",
                logger: logger)
            var found: Int64 = 0
            for try await version in try await connection.query(
                "SELECT version FROM folio_schema WHERE component = \(component) FOR UPDATE", logger: logger
            ).decode(Int64.self) {
                found = version
            }
            guard found <= currentVersion else {
                throw StorageError(
                    "the database holds the folio-sync-server schema version \(found); this server knows versions up to \(currentVersion): run a newer server")
            }
            for migration in migrations.dropFirst(Int(found)) {
                for statement in migration { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
            }
            if found < currentVersion {
                try await connection.query(
                    "UPDATE folio_schema SET version = \(currentVersion) WHERE component = \(component)", logger: logger)
            }
            return found
        }
    }
}
