import Folio
import Foundation

enum ExportCommand {
    /// `todo export --json`: every todo and tag, sorted by id, as one JSON document on stdout:
    /// `{"tags": [...], "todos": [...]}`, each entity encoded as Folio stores it (sorted keys,
    /// ISO 8601 dates with milliseconds). Two folders with the same data export the same bytes, so
    /// the output can be compared with `diff` or with what the server holds.
    static func run(_ arguments: Arguments, _ store: Store) async throws {
        _ = try arguments.positional(0, "no arguments")
        let export = Export(tags: try await store.fetch(Query<Tag>()).sorted { $0.id < $1.id },
                            todos: try await store.fetch(Query<Todo>()).sorted { $0.id.uuidString < $1.id.uuidString })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        FileHandle.standardOutput.write(try encoder.encode(export) + Data("\n".utf8))
    }

    struct Export: Encodable {
        var tags: [Tag]
        var todos: [Todo]
    }
}
