import Foundation
import GRDB

// The todo as a GRDB record in the `todo` table (Codable columns, dates as SQLite text).
extension Todo: FetchableRecord, PersistableRecord {
    static let databaseTableName = "todo"
}

/// A row of the GRDB contender's outbox: what Folio's outbox command holds (the collection, the
/// entity id, the method and the entity's JSON), numbered by SQLite.
struct OutboxRow: Codable, PersistableRecord {
    static let databaseTableName = "outbox"

    var collection: String
    var entityID: String
    var method: String
    var body: Data
    var createdAt: Date

    /// The command of an upsert of `todo`, its body encoded as Folio encodes entities (sorted keys).
    init(upserting todo: Todo, encoder: JSONEncoder) throws {
        collection = "todos"
        entityID = todo.id
        method = "PUT"
        body = try encoder.encode(todo)
        createdAt = todo.updatedAt
    }
}

enum GRDBSchema {
    static let statements = """
        CREATE TABLE IF NOT EXISTS todo (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL,
            date TEXT NOT NULL,
            done BOOLEAN NOT NULL,
            priority INTEGER NOT NULL,
            tagID TEXT,
            createdAt DATETIME NOT NULL,
            updatedAt DATETIME NOT NULL);
        CREATE INDEX IF NOT EXISTS todo_date ON todo(date);
        CREATE TABLE IF NOT EXISTS outbox (
            sequence INTEGER PRIMARY KEY AUTOINCREMENT,
            collection TEXT NOT NULL,
            entityID TEXT NOT NULL,
            method TEXT NOT NULL,
            body BLOB NOT NULL,
            createdAt DATETIME NOT NULL);
        """
}
