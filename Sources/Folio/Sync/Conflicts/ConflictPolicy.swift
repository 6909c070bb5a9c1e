/// How the sync engine settles a conflict: the server's version of an entity is not the one a
/// pushed change was made on (409 or 412). Named after the Core Data merge policies.
///
/// ```swift
/// var sync = SyncEngine.Configuration()
/// sync.sync(Todo.self, conflicts: .threeWayMerge)
/// sync.sync(Tag.self, conflicts: .custom { conflict in
///     .send(conflict.local.map { var tag = $0; tag.name = max($0.name, conflict.server?.name ?? ""); return tag })
/// })
/// ```
public struct ConflictPolicy<E: Entity>: Sendable {
    enum Kind: Sendable {
        case serverWins, clientWins, threeWayMerge, keepBoth
        case custom(@Sendable (Conflict<E>) throws -> ConflictResolution<E>)
    }

    let kind: Kind

    /// The server's entity (or its deletion) replaces the local one; the command and the later
    /// pending commands of the entity are dropped. Core Data's "store trump"/"rollback".
    public static var serverWins: ConflictPolicy { ConflictPolicy(kind: .serverWins) }

    /// The local change is sent again over the server's version. Core Data's "overwrite".
    public static var clientWins: ConflictPolicy { ConflictPolicy(kind: .clientWins) }

    /// Field by field against the entity the change was made on: fields changed locally keep the
    /// local value, fields changed only on the server keep the server's. The merged entity is
    /// stored and sent. A local delete over a server-side edit keeps the edit; a local edit over a
    /// server-side delete recreates the entity. The default.
    public static var threeWayMerge: ConflictPolicy { ConflictPolicy(kind: .threeWayMerge) }

    /// The command moves to `outbox/failed/` with the server's entity and version; the app decides
    /// with ``SyncEngine/resolveFailedConflict(_:keeping:)``.
    public static var keepBoth: ConflictPolicy { ConflictPolicy(kind: .keepBoth) }

    /// The app decides, with the three versions in hand.
    /// - Parameter resolve: Gets the conflict and says what to do. If it throws, the command moves
    ///   to `outbox/failed/` as with ``keepBoth``.
    /// - Returns: The policy.
    public static func custom(_ resolve: @escaping @Sendable (Conflict<E>) throws -> ConflictResolution<E>) -> ConflictPolicy {
        ConflictPolicy(kind: .custom(resolve))
    }
}

/// A conflict, as a custom policy sees it.
public struct Conflict<E: Entity>: Sendable {
    /// The entity as the local change was made on it (nil: the change created it).
    public let base: E?
    /// The local change: the entity to send, or nil for a delete.
    public let local: E?
    /// The server's entity, or nil if the server deleted it.
    public let server: E?
    /// The server's version of the entity.
    public let serverVersion: String?
}

/// What a custom policy decides.
public enum ConflictResolution<E: Entity>: Sendable {
    /// Take the server's entity (or deletion); drop the local change.
    case useServer
    /// Send this entity over the server's version (and store it locally).
    case send(E)
    /// Send the delete over the server's version.
    case delete
    /// Leave it for the app: the command moves to `outbox/failed/` with both versions.
    case keepBoth
}
