/// Whether and how a collection's local changes reach the server.
public struct SyncMode: Sendable, Equatable {
    enum Kind: Sendable, Equatable { case push, pullOnly, localOnly }

    let kind: Kind
    /// Whether consecutive pending commands of one entity collapse (see ``push(coalescing:)``).
    public let coalescing: Bool

    /// Every local change is sent: each transaction that changes an entity enqueues a command in
    /// the outbox, in the same transaction.
    public static let push = SyncMode(kind: .push, coalescing: false)

    /// Every local change is sent; with `coalescing`, consecutive pending upserts of one entity
    /// collapse to its final state, and an upsert followed by a delete of an entity the server
    /// never saw collapses to nothing. Commands being sent are never touched, and the commands of
    /// one entity are never reordered.
    /// - Parameter coalescing: Whether to collapse pending commands.
    /// - Returns: The sync mode.
    public static func push(coalescing: Bool) -> SyncMode { SyncMode(kind: .push, coalescing: coalescing) }

    /// Server-derived data stored locally and refreshed from the server, never pushed (TyTE's
    /// DailyStat).
    public static let pullOnly = SyncMode(kind: .pullOnly, coalescing: false)

    /// Never synced.
    public static let localOnly = SyncMode(kind: .localOnly, coalescing: false)
}

extension Entity {
    /// By default a collection is local only; declare `static let syncMode = SyncMode.push` to
    /// send its changes.
    public static var syncMode: SyncMode { .localOnly }
}
