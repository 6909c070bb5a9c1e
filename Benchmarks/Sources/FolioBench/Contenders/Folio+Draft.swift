import Folio
import Foundation

// The draft as a Folio entity: day-partitioned, pushed through the outbox with coalescing, so a
// change of a draft whose last command still waits replaces that command (SyncMode.push(coalescing:)).
extension Draft: Entity {
    static let collection = "drafts"
    static let partitioning = Partitioning<Draft>.day(\.date)
    static let syncMode = SyncMode.push(coalescing: true)
}

/// The same draft, local only: writes the same JSON into the same collection without queuing
/// commands. Seeds the drafts already on the server.
struct LocalDraft: Entity {
    static let collection = "drafts"
    static let partitioning = Partitioning<LocalDraft>.day(\.date)
    static let syncMode = SyncMode.localOnly

    var id: String
    var title: String
    var date: String
    var done: Bool
    var priority: Int
    var tagID: String?
    var createdAt: Date
    var updatedAt: Date

    init(_ draft: Draft) {
        (id, title, date, done, priority, tagID, createdAt, updatedAt) =
            (draft.id, draft.title, draft.date, draft.done, draft.priority, draft.tagID, draft.createdAt, draft.updatedAt)
    }
}
