extension SyncEngine {
    /// What the engine syncs and how hard it tries. The defaults suit an app.
    ///
    /// ```swift
    /// var configuration = SyncEngine.Configuration()
    /// configuration.sync(Todo.self)                               // three-way merge on conflict
    /// configuration.sync(Tag.self, conflicts: .serverWins)
    /// configuration.sync(DailyStat.self)                          // pull-only
    /// configuration.refresh(DailyStat.self, after: Todo.self)     // the server derives it from todos
    /// ```
    public struct Configuration: Sendable {
        var collections: [String: SyncedCollection] = [:]
        var refreshes: [(derived: String, source: String)] = []

        /// After this many failed attempts that the server answered (5xx, 429…), a command moves
        /// to `outbox/failed/`. Network failures (no answer at all) never count: an app may stay
        /// offline for weeks. Default 10.
        public var maxAttempts = 10
        /// The first retry delay; each failure doubles it, with jitter. Default 1 second.
        public var initialBackoff: Duration = .seconds(1)
        /// The longest retry delay (a server's `Retry-After` may ask for more, up to
        /// ``maxRetryAfter``). Default 5 minutes.
        public var maxBackoff: Duration = .seconds(300)
        /// The longest `Retry-After` honoured. Default 1 hour.
        public var maxRetryAfter: Duration = .seconds(3600)
        /// How often an idle engine looks at the outbox for commands it was not told about (from
        /// another process, for example), or nil never. Default 30 seconds.
        public var pollInterval: Duration? = .seconds(30)
        /// How many conflicts in a row one command may meet before it waits for the next attempt.
        /// Default 3.
        public var maxConflictRounds = 3

        /// The defaults: no collection registered (commands of unregistered collections are still
        /// sent; their conflicts are merged field by field, and the server's answers are not
        /// stored, since Folio cannot check them against the type).
        public init() {}

        /// Registers an entity type: its server answers are checked against it, and its conflicts
        /// settled by `conflicts`.
        /// - Parameters:
        ///   - type: The entity type (a ``SyncMode/push`` or ``SyncMode/pullOnly`` collection).
        ///   - conflicts: The conflict policy; default ``ConflictPolicy/threeWayMerge``.
        public mutating func sync<E: Entity>(_ type: E.Type, conflicts: ConflictPolicy<E> = .threeWayMerge) {
            collections[E.collection] = SyncedCollection(E.self, policy: conflicts)
        }

        /// Pulls the partitions of a server-derived collection that pushed changes of `source`
        /// affect, after they are acknowledged (TyTE's DailyStat after its todos): a todo of
        /// 2026-11-21 refreshes the `2026-11` DailyStat partition.
        /// - Parameters:
        ///   - derived: The derived collection (registered with ``sync(_:conflicts:)`` too).
        ///   - source: The collection whose pushes change it.
        public mutating func refresh<D: Entity, S: Entity>(_ derived: D.Type, after source: S.Type) {
            if collections[D.collection] == nil { sync(D.self) }
            refreshes.append((D.collection, S.collection))
        }
    }
}
