public import Foundation

/// How the sync engine talks to a server: it pushes one command at a time and pulls server state.
///
/// ``HTTPTransport`` speaks the protocol of PROTOCOL.md. An app whose server has its own API
/// implements this protocol and maps each command to its own requests; the engine keeps the
/// ordering, retries, backoff, conflict handling and bookkeeping.
///
/// A transport only reports what happened. It must not retry by itself (the engine does, with the
/// same idempotency key) and it must treat the server's answers as untrusted input.
public protocol Transport: Sendable {
    /// Sends one command.
    /// - Parameter request: The command, the body to send and its preconditions.
    /// - Returns: What the server did with it.
    /// - Throws: Only for failures the transport cannot classify (the engine retries them later,
    ///   counting them as attempts); report what the server said as a ``PushOutcome``.
    func push(_ request: PushRequest) async throws -> PushOutcome

    /// Fetches server state: a whole partition, or the changes since a cursor.
    /// - Parameter request: What to fetch.
    /// - Returns: The entities (or changes) the server holds.
    /// - Throws: ``FolioError`` with ``FolioError/Code/network``, ``FolioError/Code/unauthorized``
    ///   or ``FolioError/Code/badResponse``.
    func pull(_ request: PullRequest) async throws -> PullResponse
}

/// A transport that can send many commands in one request (PROTOCOL.md, "Batches").
public protocol BatchTransport: Transport {
    /// The most commands the engine puts in one batch.
    var maxBatchSize: Int { get }

    /// Sends consecutive commands in one request. The server handles them in order and stops after
    /// the first that does not succeed.
    /// - Parameter requests: The commands, in queue order.
    /// - Returns: One outcome per command the server handled, in order: possibly fewer than
    ///   `requests` (the rest are sent again later), never more.
    func push(batch requests: [PushRequest]) async throws -> [PushOutcome]
}

/// One command on its way to the server.
public struct PushRequest: Sendable {
    /// What the server must hold for the change to apply.
    public enum Precondition: Sendable, Equatable {
        /// The entity is at this version (`If-Match`).
        case version(String)
        /// The server does not have the entity (`If-None-Match: *`): a create.
        case absent
        /// No condition (custom commands).
        case none
    }

    /// The command, as its file holds it.
    public let command: OutboxCommand
    /// The body to send: the command's own body, or the merged entity after a conflict.
    public let body: Data?
    /// What the server must hold for the change to apply.
    public let precondition: Precondition
    /// The idempotency key: the command's id, or `<id>@<server version>` for a resend after a
    /// conflict. The same request is always sent with the same key.
    public let idempotencyKey: String

    /// Creates a request (for transports' tests; the engine makes them).
    public init(command: OutboxCommand, body: Data?, precondition: Precondition, idempotencyKey: String) {
        self.command = command
        self.body = body
        self.precondition = precondition
        self.idempotencyKey = idempotencyKey
    }
}

/// What the server did with a pushed command.
public enum PushOutcome: Sendable, Equatable {
    /// Applied. `version` is the entity's new version (its ETag); `entity` the entity as the
    /// server stored it, if it said.
    case applied(version: String?, entity: Data?)
    /// The server's version of the entity is not the one the change was made on (409/412).
    /// `entity` is the server's current entity, or nil if the server deleted it.
    case conflict(version: String?, entity: Data?)
    /// Try again later (408, 425, 429, 5xx, an unusable answer). `after` is the server's
    /// `Retry-After`, if any.
    case retryLater(reason: String, status: Int?, after: Duration?)
    /// The server could not be reached or the connection failed before an answer: try again when
    /// the network is back. Never dead-letters the command.
    case unreachable(reason: String)
    /// The server refused the credentials (401).
    case unauthorized(reason: String)
    /// The server refused the command for good (other 4xx): it moves to `outbox/failed/`.
    case rejected(FailureReason)
}

extension FailureReason: Equatable {
    /// Whether two failures say the same: reason, status, details and extra members.
    /// - Parameters:
    ///   - a: A failure.
    ///   - b: Another failure.
    /// - Returns: True if every part is equal.
    public static func == (a: FailureReason, b: FailureReason) -> Bool {
        a.reason == b.reason && a.status == b.status && a.details == b.details && a.extra == b.extra
    }
}

/// What to pull.
public struct PullRequest: Sendable, Equatable {
    /// The collection.
    public let collection: String
    /// A partition key (`2026-11-21`, `2026-11`, or `""` for an unpartitioned collection), or nil
    /// for the changes since ``cursor``.
    public let partition: String?
    /// The cursor the previous changes pull returned (nil: from the beginning). Only when
    /// ``partition`` is nil.
    public let cursor: String?

    /// Creates a request.
    public init(collection: String, partition: String?, cursor: String? = nil) {
        self.collection = collection
        self.partition = partition
        self.cursor = cursor
    }
}

/// Server state, as a pull returns it.
public struct PullResponse: Sendable {
    /// One entity on the server, or its deletion.
    public struct Item: Sendable {
        /// The entity's id.
        public let id: String
        /// Its version (ETag), if the server gave one.
        public let version: String?
        /// Its JSON, or nil if it was deleted.
        public let entity: Data?

        /// Creates an item.
        public init(id: String, version: String?, entity: Data?) {
            self.id = id
            self.version = version
            self.entity = entity
        }
    }

    /// The entities (a partition pull) or changes (a cursor pull), oldest first.
    public let items: [Item]
    /// The cursor for the next changes pull (nil for a partition pull).
    public let cursor: String?
    /// Whether more changes wait after ``cursor``.
    public let hasMore: Bool
    /// Why the server has nothing to say, when it does not serve the collection (404 to a
    /// partition pull) or has no change feed (501 to a cursor pull): then nothing is stored and,
    /// above all, nothing local is deleted (PROTOCOL.md, "Collections a server does not serve").
    public let notServed: String?

    /// Creates a response.
    public init(items: [Item], cursor: String? = nil, hasMore: Bool = false) {
        self.items = items
        self.cursor = cursor
        self.hasMore = hasMore
        self.notServed = nil
    }

    /// A response saying the server does not serve this pull: nothing is stored or deleted.
    /// - Parameter reason: What the server said, for the app's events and logs.
    public static func notServed(_ reason: String) -> PullResponse {
        PullResponse(notServed: reason)
    }

    private init(notServed reason: String) {
        items = []
        cursor = nil
        hasMore = false
        notServed = reason
    }
}
