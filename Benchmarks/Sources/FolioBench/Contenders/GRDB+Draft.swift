import Foundation
import GRDB

// The draft as a GRDB record in the `draft` table, the same columns as `todo`.
extension Draft: FetchableRecord, PersistableRecord {
    static let databaseTableName = "draft"
}

extension OutboxRow {
    /// The command of an upsert of `draft`, its body encoded as Folio encodes entities.
    init(upserting draft: Draft, encoder: JSONEncoder) throws {
        collection = Draft.collection
        entityID = draft.id
        method = "PUT"
        body = try encoder.encode(draft)
        createdAt = draft.updatedAt
    }
}

extension GRDBSchema {
    /// The outbox group's tables: row 1's (`todo` and `outbox`), the `draft` table and the index
    /// an app would create to find an entity's pending commands (sync status, coalescing).
    static let outboxAxis =
        statements + """
            CREATE TABLE IF NOT EXISTS draft (
                id TEXT PRIMARY KEY NOT NULL,
                title TEXT NOT NULL,
                date TEXT NOT NULL,
                done BOOLEAN NOT NULL,
                priority INTEGER NOT NULL,
                tagID TEXT,
                createdAt DATETIME NOT NULL,
                updatedAt DATETIME NOT NULL);
            CREATE INDEX IF NOT EXISTS draft_date ON draft(date);
            CREATE INDEX IF NOT EXISTS outbox_entity ON outbox(collection, entityID);
            """
}
