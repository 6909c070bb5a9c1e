import Foundation

/// A todo being drafted: the entity of the outbox group's collection that coalesces (a person
/// edits it again and again, and only its last state needs sending). The same fields as ``Todo``;
/// Folio stores it in `drafts` (Contenders/Folio+Draft.swift), GRDB in a `draft` table
/// (Contenders/GRDB+Draft.swift).
struct Draft: Codable, Sendable, Equatable, Identifiable {
    var id: String
    var title: String
    /// The day it belongs to, `YYYY-MM-DD`: Folio's partition, GRDB's indexed column.
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

    /// The next edit of the draft: done toggled, a minute later.
    func edited() -> Draft {
        var draft = self
        draft.done.toggle()
        draft.updatedAt = updatedAt.addingTimeInterval(60)
        return draft
    }
}
