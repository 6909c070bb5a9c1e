import Folio
import Foundation

enum ExportCommand {
    /// `todo export --json`: every todo and tag, sorted by id, as one JSON document on stdout:
    /// `{"tags": [...], "todos": [...]}`, each entity encoded as Folio stores it (sorted keys,
    /// ISO 8601 dates with milliseconds). Two folders with the same data export the same bytes, so
    /// the output can be compared with `diff` or with what the server holds.
    static func run(_ arguments: Arguments, _ store: Store) async throws {
        _ = try arguments.positional(0, "no arguments")
        let export = Export(
            tags: try await store.fetch(Query<Tag>()).sorted { $0.id < $1.id },
            todos: try await store.fetch(Query<Todo>()).sorted { $0.id.uuidString < $1.id.uuidString })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            // Folio's form (FORMAT.md): UTC, to the nearest millisecond. Rounding, not the
            // formatter's truncation, gives back the stored text of a date read from the store.
            let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
            let seconds = (milliseconds / 1000).rounded(.down)
            let fraction = String(Int(milliseconds - seconds * 1000) + 1000).dropFirst()
            var container = encoder.singleValueContainer()
            try container.encode(Date(timeIntervalSince1970: seconds).formatted(.iso8601).dropLast() + "." + fraction + "Z")
        }
        FileHandle.standardOutput.write(try encoder.encode(export) + Data("\n".utf8))
    }

    struct Export: Encodable {
        var tags: [Tag]
        var todos: [Todo]
    }
}
