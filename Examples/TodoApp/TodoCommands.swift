import Folio
import Foundation

// The todo commands. Each change is one `store.write` transaction: the todo, its outbox command
// (Folio adds it, since todos are `.push`) and the day's DailyStat are committed together, and are
// durable when `write` returns. Nothing here needs a network: the sync command sends it later.

enum TodoCommands {
    /// `todo add TITLE [--date DAY] [--tag NAME] [--priority 0-3]`
    static func add(_ arguments: Arguments, _ store: Store) async throws {
        let title = arguments.positional.joined(separator: " ").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !title.isEmpty else { throw UsageError("a todo needs a title") }
        let date = try arguments.value("date").map(Day.parse) ?? Day.today
        let priority = try arguments.value("priority").map(parsePriority) ?? 0
        let tagName = arguments.value("tag")
        let todo = try await store.write { tx in
            var todo = Todo(title: title, date: date, priority: priority)
            if let tagName { todo.tagID = try tx.tag(named: tagName).id }
            try tx.upsert(todo)
            try tx.refreshStats(of: [date])
            return todo
        }
        print("added \(todo.shortID) \"\(todo.title)\" on \(todo.date)")
    }

    /// `todo list [DAY]`: the day's todos, each marked with its sync state.
    static func list(_ arguments: Arguments, _ store: Store) async throws {
        guard arguments.positional.count <= 1 else { throw UsageError("list takes at most one day") }
        let date = try arguments.positional.first.map(Day.parse) ?? Day.today
        let todos = try await store.fetch(Query<Todo>(.day(date))).sorted { a, b in
            if a.priority != b.priority { return a.priority > b.priority }
            if a.createdAt != b.createdAt { return a.createdAt < b.createdAt }
            return a.id.uuidString < b.id.uuidString
        }
        guard !todos.isEmpty else {
            print("no todos on \(date)")
            return
        }
        let tagNames = try await TagCommands.names(store)
        // Failed: the server refused the change for good (it stays local; `outbox/failed/` says why).
        // Pending: not acknowledged by the server yet.
        let failed = Set(try await store.failedCommands().filter { $0.command.collection == Todo.collection }.compactMap(\.command.entityID))
        let done = todos.filter(\.done).count
        print("\(date): \(todos.count) todo\(todos.count == 1 ? "" : "s"), \(done) done")
        for todo in todos {
            var line = "  [\(todo.done ? "x" : " ")] \(todo.shortID)  \(todo.title)"
            if todo.priority > 0 { line += "  !\(todo.priority)" }
            if let tagID = todo.tagID { line += "  #\(tagNames[tagID] ?? tagID)" }
            if failed.contains(todo.id.uuidString) {
                line += "  (failed to sync)"
            } else if try await store.hasPendingChanges(Todo.self, id: todo.id) {
                line += "  (pending)"
            }
            print(line)
        }
    }

    /// `todo done ID`: toggles the todo.
    static func toggle(_ arguments: Arguments, _ store: Store) async throws {
        let id = try arguments.positional(1, "a todo id")[0]
        let todo = try await change(id, in: store) { todo, _ in todo.done.toggle() }
        print("\(todo.done ? "done" : "not done"): \(todo.shortID) \"\(todo.title)\"")
    }

    /// `todo edit ID [--title T] [--priority N] [--tag NAME | --no-tag]`
    static func edit(_ arguments: Arguments, _ store: Store) async throws {
        let id = try arguments.positional(1, "a todo id")[0]
        let title = arguments.value("title")?.trimmingCharacters(in: .whitespacesAndNewlines)
        let priority = try arguments.value("priority").map(parsePriority)
        let tagName = arguments.value("tag")
        let clearTag = arguments.has("no-tag")
        guard title != nil || priority != nil || tagName != nil || clearTag else {
            throw UsageError("nothing to change: give --title, --priority, --tag or --no-tag")
        }
        guard title != "" else { throw UsageError("a todo needs a title") }
        guard !(clearTag && tagName != nil) else { throw UsageError("--tag and --no-tag exclude each other") }
        let todo = try await change(id, in: store) { todo, tx in
            if let title { todo.title = title }
            if let priority { todo.priority = priority }
            if let tagName { todo.tagID = try tx.tag(named: tagName).id }
            if clearTag { todo.tagID = nil }
        }
        print("edited \(todo.shortID) \"\(todo.title)\"")
    }

    /// `todo move ID DAY`: one transaction removes the todo from its day's file and adds it to the
    /// other's, and recomputes both days' stats.
    static func move(_ arguments: Arguments, _ store: Store) async throws {
        let words = try arguments.positional(2, "a todo id and a day")
        let date = try Day.parse(words[1])
        let todo = try await change(words[0], in: store) { todo, _ in todo.date = date }
        print("moved \(todo.shortID) \"\(todo.title)\" to \(todo.date)")
    }

    /// `todo delete ID`
    static func delete(_ arguments: Arguments, _ store: Store) async throws {
        let id = try arguments.positional(1, "a todo id")[0]
        let todo = try await store.write { tx in
            let todo = try tx.todo(matching: id)
            try tx.delete(Todo.self, id: todo.id)
            try tx.refreshStats(of: [todo.date])
            return todo
        }
        print("deleted \(todo.shortID) \"\(todo.title)\"")
    }

    /// Changes one todo in one transaction, and recomputes the stats of the days it was and is on.
    private static func change(
        _ prefix: String, in store: Store,
        _ body: @escaping @Sendable (inout Todo, Transaction) throws -> Void
    ) async throws -> Todo {
        try await store.write { tx in
            var todo = try tx.todo(matching: prefix)
            let oldDate = todo.date
            try body(&todo, tx)
            todo.updatedAt = Date()
            try tx.upsert(todo)
            try tx.refreshStats(of: [oldDate, todo.date])
            return todo
        }
    }

    private static func parsePriority(_ text: String) throws(UsageError) -> Int {
        guard let priority = Int(text), (0...3).contains(priority) else { throw UsageError("priority must be 0, 1, 2 or 3, not \"\(text)\"") }
        return priority
    }
}

extension Todo {
    /// The first 8 characters of the id: enough to tell todos apart, as git shortens commits.
    var shortID: String { String(id.uuidString.prefix(8)) }
}

extension Transaction {
    /// The todo whose id is or starts with `prefix` (any case, as git resolves commit ids).
    /// - Throws: ``Failure`` when none matches; ``UsageError`` when several do.
    func todo(matching prefix: String) throws -> Todo {
        if let id = UUID(uuidString: prefix) {
            guard let todo = try get(Todo.self, id: id) else { throw Failure("no todo has the id \(id.uuidString)") }
            return todo
        }
        let wanted = prefix.uppercased()
        guard !wanted.isEmpty else { throw UsageError("an empty todo id") }
        let matches = try fetch(Query<Todo>()).filter { $0.id.uuidString.hasPrefix(wanted) }
        switch matches.count {
        case 0: throw Failure("no todo id starts with \(prefix)")
        case 1: return matches[0]
        default:
            let listed = matches.prefix(5).map { "\($0.id.uuidString) \"\($0.title)\" (\($0.date))" }.joined(separator: ", ")
            throw UsageError("\(prefix) is ambiguous: \(matches.count) todos match (\(listed)); give more of the id")
        }
    }
}
