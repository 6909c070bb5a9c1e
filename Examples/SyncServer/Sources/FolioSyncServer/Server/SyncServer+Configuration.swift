public import Foundation

extension SyncServer {
    /// How to run a server.
    public struct Configuration: Sendable {
        /// The TCP port on 127.0.0.1; 0 picks a free one (read it from ``SyncServer/port``).
        public var port: Int = 8080
        /// The Folio folder the server keeps its data in (unless ``postgres`` is set); created if
        /// missing. With ``ownerTokens``, it holds one Folio store per owner.
        public var dataFolder: URL
        /// If set, the server keeps its data in PostgreSQL instead of ``dataFolder``.
        public var postgres: PostgresSettings?
        /// The most PostgreSQL connections this process opens.
        public var postgresPoolSize: Int = 10
        /// The isolation level of the PostgreSQL push transactions.
        public var postgresIsolation: PostgresIsolation = .readCommitted
        /// If set, every request must carry `Authorization: Bearer <token>`; every client shares
        /// one owner's data.
        public var token: String?
        /// Bearer tokens by the owner they speak for (see ``OwnerTokens``): each owner's entities,
        /// idempotency keys and feed are apart from every other owner's. Empty: ``token`` rules.
        public var ownerTokens: [String: String] = [:]
        /// How many days the response to a push is remembered by its `Idempotency-Key` (at
        /// least; whole UTC days are forgotten at once). Clients retry well within a day.
        public var rememberKeysForDays: Int = 7
        /// The most changes one `?since=` answer holds; clients ask again while `hasMore`.
        public var changesPageSize: Int = 500
        /// The largest request body, in bytes (a batch may be this large).
        public var maxBodyBytes: Int = 16 << 20
        /// The largest entity one `PUT` (or batch item) may carry, in bytes of JSON.
        public var maxEntityBytes: Int = 256 << 10
        /// A deliberately broken storage behaviour, for the tests that must fail on it; also read
        /// from `FOLIO_SYNC_SERVER_FAULT`. Never set in use.
        var storageFault: PostgresStorage.Fault?

        /// A configuration with the defaults.
        /// - Parameter dataFolder: The Folio folder for the server's data.
        public init(dataFolder: URL) {
            self.dataFolder = dataFolder
        }
    }

    /// The isolation level of the PostgreSQL push transactions.
    public enum PostgresIsolation: String, Sendable {
        /// PostgreSQL's default; the owner's row lock orders an owner's pushes.
        case readCommitted = "read-committed"
        /// What CockroachDB always runs: contended pushes fail with SQLSTATE 40001 and are run again.
        case serializable
    }
}
