/// Where one entity stands with the server, from its commands in the outbox: like Firestore's
/// `hasPendingWrites`, joinable with query results (``Store/observeWithSyncStatus(_:)``).
public enum EntitySyncStatus: Sendable, Hashable, CustomStringConvertible {
    /// No local change waits: the server has acknowledged every change (or the entity was never
    /// changed locally, or its collection is not synced).
    case synced
    /// `commands` local changes wait to be sent (or are on their way).
    case pending(commands: Int)
    /// A change can never be sent as it is: the command sits in `outbox/failed/` until the app
    /// retries or drops it. `reason` is why (with the server's HTTP `status`, if it answered).
    /// Later changes of the entity may also be pending.
    case failed(sequence: UInt64, reason: String, status: Int?)

    /// Whether a local change has not reached the server (pending or failed).
    public var hasPendingWrites: Bool { self != .synced }

    /// The status in a few words: `synced`, `pending (2)`, `failed (command 42, HTTP 422): …`.
    public var description: String {
        switch self {
        case .synced: return "synced"
        case .pending(let commands): return "pending (\(commands))"
        case .failed(let sequence, let reason, let status):
            return "failed (command \(sequence)\(status.map { ", HTTP \($0)" } ?? "")): \(reason)"
        }
    }
}

/// An entity with its sync status: the element of ``Store/observeWithSyncStatus(_:)``.
public struct WithSyncStatus<E: Entity>: Sendable {
    /// The entity.
    public let entity: E
    /// Where it stands with the server.
    public let syncStatus: EntitySyncStatus
}

extension OutboxState {
    /// The sync status of each of these entities of a collection.
    func syncStatuses(collection: String, ids: [String]) -> [String: EntitySyncStatus] {
        var failedByID: [String: EntitySyncStatus] = [:]
        for (sequence, command, reason) in failed where command["collection"]?.stringValue == collection {
            guard let id = command["entityID"]?.stringValue, failedByID[id] == nil else { continue }
            failedByID[id] = .failed(
                sequence: sequence, reason: reason["reason"]?.stringValue ?? "unknown",
                status: reason["status"]?.integerValue.map { Int($0) })
        }
        var result: [String: EntitySyncStatus] = [:]
        for id in ids {
            let count = pending(collection: collection, id: id).count
            result[id] = failedByID[id] ?? (count == 0 ? .synced : .pending(commands: count))
        }
        return result
    }
}
