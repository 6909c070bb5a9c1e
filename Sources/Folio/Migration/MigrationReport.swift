/// What pending migrations change (a dry run), or changed.
public struct MigrationReport: Sendable, Equatable, CustomStringConvertible {
    /// One collection's changes.
    public struct Collection: Sendable, Equatable {
        /// The collection's name (after the migrations).
        public let name: String
        /// Entities added, changed or moved.
        public let entitiesChanged: Int
        /// Entities removed (moved to another collection, merged, deleted).
        public let entitiesRemoved: Int
        /// Partition files written.
        public let filesWritten: Int
        /// Partition files removed.
        public let filesRemoved: Int
    }

    /// The migrations that run (or ran), in order; empty when the store was up to date.
    public let pending: [String]
    /// The schema version after them.
    public let schemaVersion: Int
    /// The collections whose files change.
    public internal(set) var collections: [Collection] = []
    /// Pending or failed outbox commands rewritten into the new shape.
    public internal(set) var commandsRewritten = 0
    /// Pending commands kept as they were queued because they may already have reached the
    /// server (their answer lost): a retry must repeat the same request under its key.
    public internal(set) var commandsKept = 0
    /// Commands the migrations enqueue (``Migrator/registerMigration(_:enqueuingCommandsFor:_:)``).
    public internal(set) var commandsEnqueued = 0

    init(pending: [String], schemaVersion: Int) {
        self.pending = pending
        self.schemaVersion = schemaVersion
    }

    /// A few lines for a person: the migrations, then each collection's and the outbox's changes.
    public var description: String {
        if pending.isEmpty { return "schema version \(schemaVersion): no pending migration" }
        var lines = ["\(pending.count) pending migration(s) to schema version \(schemaVersion): \(pending.joined(separator: ", "))"]
        for collection in collections {
            lines.append(
                "  \(collection.name): \(collection.entitiesChanged) entit\(collection.entitiesChanged == 1 ? "y" : "ies") changed, \(collection.entitiesRemoved) removed; \(collection.filesWritten) file(s) written, \(collection.filesRemoved) removed"
            )
        }
        if collections.isEmpty { lines.append("  no data file changes") }
        lines.append("  outbox: \(commandsRewritten) pending command(s) rewritten, \(commandsKept) kept as sent, \(commandsEnqueued) enqueued")
        return lines.joined(separator: "\n")
    }
}
