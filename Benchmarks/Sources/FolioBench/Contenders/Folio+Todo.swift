import Folio
import Foundation

// The todo as a Folio entity: day-partitioned, pushed through the outbox, so each upsert also
// queues its outbox command in the same transaction (the "upsert + enqueue" of the issue).
extension Todo: Entity {
    static let collection = "todos"
    static let partitioning = Partitioning<Todo>.day(\.date)
    static let syncMode = SyncMode.push
}

/// The same todo, local only: writes the same JSON into the same collection without queuing
/// commands. Seeds stores (data already on the server) and runs the local bulk import.
struct LocalTodo: Entity {
    static let collection = "todos"
    static let partitioning = Partitioning<LocalTodo>.day(\.date)
    static let syncMode = SyncMode.localOnly

    var id: String
    var title: String
    var date: String
    var done: Bool
    var priority: Int
    var tagID: String?
    var createdAt: Date
    var updatedAt: Date

    init(_ todo: Todo) {
        (id, title, date, done, priority, tagID, createdAt, updatedAt) =
            (todo.id, todo.title, todo.date, todo.done, todo.priority, todo.tagID, todo.createdAt, todo.updatedAt)
    }
}
