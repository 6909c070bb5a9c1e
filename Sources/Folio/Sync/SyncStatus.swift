public import Foundation

/// Where syncing stands, for a UI to show.
public struct SyncStatus: Sendable, Equatable {
    /// Whether the engine runs (between ``SyncEngine/start()`` and ``SyncEngine/stop()``).
    public var isRunning = false
    /// False after the server could not be reached, until a request gets through again or the
    /// app reports the network back.
    public var isOnline = true
    /// Commands waiting to be sent, as of the last look at the outbox.
    public var pendingCount = 0
    /// The command being sent, if any.
    public var inFlight: UInt64?
    /// Why the last attempt failed, until one succeeds.
    public var lastError: String?
    /// When a command was last acknowledged or a pull last succeeded.
    public var lastSuccess: Date?
    /// When the engine tries again after a failure, if it waits.
    public var nextAttempt: Date?
    /// Why the queue cannot move (an unreadable command file), if it cannot.
    public var blockedReason: String?
}

/// Something the sync engine did, for a UI or a log.
public enum SyncEvent: Sendable, Equatable {
    /// A command is on its way.
    case sending(UInt64)
    /// The server applied a command; `version` is the entity's new version.
    case sent(UInt64, version: String?)
    /// An attempt failed; the command is tried again at `nextAttempt`.
    case retrying(UInt64, reason: String, nextAttempt: Date)
    /// A command can never succeed and moved to `outbox/failed/`.
    case deadLettered(UInt64, reason: String)
    /// A conflict was settled: `resolution` is `"server"`, `"client"`, `"merged"`, `"custom"` or
    /// `"kept both"`.
    case conflict(UInt64, resolution: String)
    /// A pull stored `count` entities (and deletions) of a collection.
    case pulled(collection: String, partition: String?, count: Int)
    /// The server does not serve a pull (a collection it does not know, or no change feed):
    /// nothing was stored or deleted.
    case notServed(collection: String, partition: String?, reason: String)
    /// The server could not be reached.
    case offline(reason: String)
    /// A request got through after the engine was offline.
    case online
    /// The queue cannot move: an unreadable command file is quarantined.
    case blocked(reason: String)
    /// The queue is empty.
    case idle
}
