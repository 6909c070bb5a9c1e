import Foundation

/// A change the outbox group commits (Runner+Outbox.swift): a todo, whose command joins the queue,
/// or a draft with a pending command, whose new command replaces that one (the drafts coalesce).
/// Codable, to hand one to a child process.
enum OutboxEdit: Codable, Sendable {
    case todo(Todo)
    case draft(Draft)

    /// `count` changes of todos: row 1's edits (70% edit a todo of a recent day, 30% create one),
    /// varied by `salt` (the round).
    static func plain(_ data: OutboxData, count: Int, salt: UInt64) -> [OutboxEdit] {
        data.todos.edits(count: count, salt: salt).map(OutboxEdit.todo)
    }

    /// How many drafts the coalescing edits go round: five, fewer in the shortest outboxes.
    static func coalescingDrafts(_ pending: [Draft]) -> Int { min(pending.count, 5) }

    /// `count` changes of drafts that have a pending command, round-robin over the first
    /// ``coalescingDrafts(_:)`` of `pending`: each replaces its draft's last command (once that
    /// command can be replaced: see Runner+Outbox.swift).
    static func coalescing(_ pending: [Draft], count: Int) -> [OutboxEdit] {
        var latest = Array(pending.prefix(coalescingDrafts(pending)))
        guard !latest.isEmpty else { return [] }
        return (0..<count).map { index in
            latest[index % latest.count] = latest[index % latest.count].edited()
            return .draft(latest[index % latest.count])
        }
    }
}
