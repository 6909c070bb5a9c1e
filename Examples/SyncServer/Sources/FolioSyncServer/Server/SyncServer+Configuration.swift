public import Foundation

extension SyncServer {
    /// How to run a server.
    public struct Configuration: Sendable {
        /// The TCP port on 127.0.0.1; 0 picks a free one (read it from ``SyncServer/port``).
        public var port: Int = 8080
        /// The Folio folder the server keeps its data in; created if missing.
        public var dataFolder: URL
        /// If set, every request must carry `Authorization: Bearer <token>`.
        public var token: String?
        /// How many days the response to a push is remembered by its `Idempotency-Key` (at
        /// least; whole UTC days are forgotten at once). Clients retry well within a day.
        public var rememberKeysForDays: Int = 7
        /// The most changes one `?since=` answer holds; clients ask again while `hasMore`.
        public var changesPageSize: Int = 500
        /// The largest request body, in bytes (a batch may be this large).
        public var maxBodyBytes: Int = 16 << 20
        /// The largest entity one `PUT` (or batch item) may carry, in bytes of JSON.
        public var maxEntityBytes: Int = 256 << 10

        /// A configuration with the defaults.
        /// - Parameter dataFolder: The Folio folder for the server's data.
        public init(dataFolder: URL) {
            self.dataFolder = dataFolder
        }
    }
}
