import Foundation
import Logging
import PostgresNIO

/// Runs transactions on pooled connections, and runs one again from its start when the database
/// answers that it could not serialize it or chose it as a deadlock's victim.
///
/// This is the one retry loop of the PostgreSQL storage. Every engine the SQL is written for
/// may answer a contended transaction with SQLSTATE 40001 (serialization failure: CockroachDB
/// always runs SERIALIZABLE and may say so at COMMIT; PostgreSQL does under REPEATABLE READ or
/// SERIALIZABLE) or 40P01 (deadlock detected). A unique violation (23505) is retried too: two
/// servers creating the schema at once, or two transactions inserting one row, where the loser's
/// second run reads the winner's row. The transaction body must therefore be safe to run again:
/// it reads everything it decides on inside the transaction.
final class TransactionRunner: Sendable {
    /// The isolation level transactions ask for.
    enum Isolation: String, Sendable {
        /// PostgreSQL's default: the owner's position row serializes writers (see ``PostgresStorage``).
        case readCommitted = "READ COMMITTED"
        /// What CockroachDB always runs: contended transactions fail with 40001 and are retried.
        case serializable = "SERIALIZABLE"
    }

    /// Runs of one transaction, at most: under SERIALIZABLE, each round of contenders for one
    /// owner lets one through, so this bounds the contenders a push can outwait (with 12, one
    /// of 32 concurrent pushes of one owner ran out of runs here).
    static let maxAttempts = 40
    /// SQLSTATEs after which a transaction runs again.
    static let retryable: Set<String> = ["40001", "40P01", "23505"]

    let client: PostgresClient
    let isolation: Isolation
    let logger: Logger
    private let counter = RetryCounter()

    init(client: PostgresClient, isolation: Isolation, logger: Logger) {
        self.client = client
        self.isolation = isolation
        self.logger = logger
    }

    /// How many times a transaction ran again, since the server started.
    var retries: Int { counter.value }

    /// Runs `body` in one transaction: `BEGIN ISOLATION LEVEL …`, the body, `COMMIT`; on an error,
    /// `ROLLBACK`, and again from the start if the error is retryable (after a random pause that
    /// grows with the attempt), at most ``maxAttempts`` times.
    /// - Returns: What the body returned, once committed.
    /// - Throws: The body's error, or the database's last one.
    func run<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var attempt = 1
        while true {
            do {
                return try await client.withConnection { connection in
                    try await connection.query(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL \(isolation.rawValue)"), logger: logger)
                    do {
                        let result = try await body(connection)
                        try await connection.query("COMMIT", logger: logger)
                        return result
                    } catch {
                        do {
                            try await connection.query("ROLLBACK", logger: logger)
                        } catch let rollback {
                            logger.warning("ROLLBACK failed after \(Self.describe(error)): \(Self.describe(rollback))")
                        }
                        throw error
                    }
                }
            } catch {
                guard let state = Self.sqlState(of: error), Self.retryable.contains(state), attempt < Self.maxAttempts else { throw error }
                counter.increment()
                logger.debug("transaction retried after SQLSTATE \(state) (attempt \(attempt))")
                let pause = UInt64.random(in: 1...UInt64(1 << min(attempt, 7))) * 500_000   // up to 64 ms each
                try await Task.sleep(nanoseconds: pause)
                attempt += 1
            }
        }
    }

    /// The SQLSTATE of a database error, if it is one.
    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// A database error as a line: its SQLSTATE and message (PSQLError's own description hides both).
    static func describe(_ error: any Error) -> String {
        guard let psql = error as? PSQLError else { return "\(error)" }
        guard let info = psql.serverInfo else { return "PostgreSQL: \(psql.code)" + (psql.underlying.map { " (\($0))" } ?? "") }
        return "PostgreSQL \(info[.sqlState] ?? "?"): \(info[.message] ?? "no message")"
    }
}

/// A count shared by concurrent transactions.
private final class RetryCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    var value: Int { lock.withLock { count } }

    func increment() { lock.withLock { count += 1 } }
}
