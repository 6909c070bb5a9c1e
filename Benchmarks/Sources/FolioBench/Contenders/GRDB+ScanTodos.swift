import Foundation
import GRDB

// The scan matrix's todos as GRDB records (Codable columns; the wide todo's tags and place as
// JSON text, dates as SQLite text), each shape in a database of its own, with the indexes a
// demanding app would create for the matrix's predicates, and the statistics `ANALYZE` gathers
// so SQLite chooses between them and a full scan. No index serves `LIKE '%word%'`: SQLite reads
// every row's title, as Folio does.
extension NarrowTodo: FetchableRecord, PersistableRecord {
    static let databaseTableName = "narrowTodo"
}

extension WideTodo: FetchableRecord, PersistableRecord {
    static let databaseTableName = "wideTodo"
}

extension ScanShape {
    /// The table and its indexes.
    var schema: String {
        switch self {
        case .narrow:
            return """
                CREATE TABLE narrowTodo (
                    id TEXT PRIMARY KEY NOT NULL,
                    title TEXT NOT NULL,
                    done BOOLEAN NOT NULL,
                    day TEXT NOT NULL);
                CREATE INDEX narrowTodo_day ON narrowTodo(day);
                CREATE INDEX narrowTodo_done ON narrowTodo(done);
                """
        case .wide:
            return """
                CREATE TABLE wideTodo (
                    id TEXT PRIMARY KEY NOT NULL,
                    title TEXT NOT NULL,
                    done BOOLEAN NOT NULL,
                    day TEXT NOT NULL,
                    priority INTEGER NOT NULL,
                    estimate DOUBLE NOT NULL,
                    createdAt DATETIME NOT NULL,
                    updatedAt DATETIME NOT NULL,
                    dueAt DATETIME,
                    notes TEXT,
                    tags TEXT NOT NULL,
                    place TEXT,
                    project TEXT NOT NULL);
                CREATE INDEX wideTodo_day ON wideTodo(day);
                CREATE INDEX wideTodo_done_priority ON wideTodo(done, priority);
                CREATE INDEX wideTodo_estimate ON wideTodo(estimate);
                """
        }
    }

    /// The `WHERE` clause of `selectivity`'s predicate. (LIKE ignores ASCII case where `contains`
    /// does not; the planted words are lower case and no other word holds them, which the runner
    /// checks by comparing the counts.)
    func sql(_ selectivity: ScanSelectivity) -> String {
        switch (self, selectivity) {
        case (_, .tenth): return "title LIKE '%piano%'"
        case (.narrow, .one): return "title LIKE '%dentist%' AND done = 0"
        case (.narrow, .ten): return "title LIKE '%invoice%' AND done = 0"
        case (.wide, .one): return "done = 0 AND priority > 3"
        case (.wide, .ten): return "estimate >= 10 AND estimate < 14"
        case (_, .half): return "done = 0"
        }
    }
}
