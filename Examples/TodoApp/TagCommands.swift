import Folio
import Foundation

// The tag commands. Tags are referred to by name (unique, any case); their ids are UUIDs made
// here, so a tag created offline never clashes with one made elsewhere.

enum TagCommands {
    /// `todo tags`: every tag, by name.
    static func list(_ arguments: Arguments, _ store: Store) async throws {
        _ = try arguments.positional(0, "no arguments")
        let tags = try await store.fetch(Query<Tag>()).sorted { $0.name.lowercased() < $1.name.lowercased() }
        guard !tags.isEmpty else {
            print("no tags (add one with `todo tag add NAME`)")
            return
        }
        for tag in tags {
            let pending = try await store.hasPendingChanges(Tag.self, id: tag.id) ? "  (pending)" : ""
            print("\(tag.color)  \(tag.name)\(pending)")
        }
    }

    /// `todo tag add NAME [--color #RRGGBB]`
    static func add(_ arguments: Arguments, _ store: Store) async throws {
        let name = try validName(arguments.positional(1, "a tag name")[0])
        let color = try validColor(arguments.value("color") ?? "#808080")
        try await store.write { tx in
            guard try tx.existingTag(named: name) == nil else { throw Failure("a tag named \(name) exists already") }
            try tx.upsert(Tag(name: name, color: color))
        }
        print("added tag \(name)")
    }

    /// `todo tag rename OLD NEW`
    static func rename(_ arguments: Arguments, _ store: Store) async throws {
        let words = try arguments.positional(2, "the tag's name and its new name")
        let newName = try validName(words[1])
        try await store.write { tx in
            var tag = try tx.tag(named: words[0])
            if let other = try tx.existingTag(named: newName), other.id != tag.id {
                throw Failure("a tag named \(other.name) exists already")
            }
            tag.name = newName
            try tx.upsert(tag)
        }
        print("renamed tag \(words[0]) to \(newName)")
    }

    /// `todo tag delete NAME`
    ///
    /// The tag's todos stay, untagged: their `tagID` is cleared in the same transaction as the
    /// tag's deletion (each cleared todo is a change of its own, sent to the server), so no todo
    /// ever points at a tag that is gone. The stats of their days are recomputed with them.
    static func delete(_ arguments: Arguments, _ store: Store) async throws {
        let name = try arguments.positional(1, "a tag name")[0]
        let untagged = try await store.write { tx in
            let tag = try tx.tag(named: name)
            let todos = try tx.fetch(Query<Todo>()).filter { $0.tagID == tag.id }
            for var todo in todos {
                todo.tagID = nil
                todo.updatedAt = Date()
                try tx.upsert(todo)
            }
            try tx.refreshStats(of: todos.map(\.date))
            try tx.delete(Tag.self, id: tag.id)
            return todos.count
        }
        print("deleted tag \(name)" + (untagged > 0 ? "; \(untagged) todo\(untagged == 1 ? " is" : "s are") untagged now" : ""))
    }

    /// Tag names by id, for display.
    static func names(_ store: Store) async throws -> [String: String] {
        Dictionary(try await store.fetch(Query<Tag>()).map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    private static func validName(_ text: String) throws(UsageError) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw UsageError("a tag needs a name") }
        return name
    }

    /// `#RRGGBB`, stored in upper case.
    private static func validColor(_ text: String) throws(UsageError) -> String {
        let hex = text.dropFirst()
        guard text.first == "#", hex.count == 6, hex.allSatisfy(\.isHexDigit) else {
            throw UsageError("a color is #RRGGBB, like #FF8800, not \"\(text)\"")
        }
        return text.uppercased()
    }
}

extension Transaction {
    /// The tag with this name, compared without regard to case, or nil.
    func existingTag(named name: String) throws -> Tag? {
        let wanted = name.lowercased()
        return try fetch(Query<Tag>()).first { $0.name.lowercased() == wanted }
    }

    /// The tag with this name, compared without regard to case.
    /// - Throws: ``Failure`` if there is none.
    func tag(named name: String) throws -> Tag {
        guard let tag = try existingTag(named: name) else { throw Failure("no tag named \(name) (`todo tags` lists them)") }
        return tag
    }
}
