public import Foundation

/// An entity as the server stores it.
public struct StoredEntity: Sendable, Equatable {
    /// The version: a per-entity counter as a string (`"1"`, `"2"`, …). It keeps counting across
    /// a deletion, so a re-created entity never reuses an old version.
    public var version: String
    /// The entity's JSON, exactly as the client (or ``TestServer/edit(_:_:json:partition:)``) sent it.
    public var json: Data
    /// The partition key from the `Folio-Partition` header of the `PUT` that stored it (`""` when none).
    public var partition: String

    /// Creates a stored entity (for comparisons in tests).
    public init(version: String, json: Data, partition: String) {
        self.version = version
        self.json = json
        self.partition = partition
    }

    /// The version as an `ETag` value: `"7"`, quoted.
    public var etag: String { "\"\(version)\"" }

    /// The JSON decoded with `JSONSerialization` (fragments allowed).
    public var object: Any? { try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed]) }
}

/// One change the server applied on behalf of a client request.
public struct AppliedChange: Sendable, Equatable {
    /// The request's `Idempotency-Key`, if it had one.
    public var key: String?
    /// `PUT`, `DELETE`, or `POST` for a custom command.
    public var method: String
    /// The collection; `_commands` for a custom command.
    public var collection: String
    /// The entity id; the command's name for a custom command.
    public var id: String
    /// The entity's new version for a `PUT`; `nil` for a `DELETE` or a custom command.
    public var version: String?
    /// The `Folio-Partition` header, if any.
    public var partition: String?
    /// The request's body (the entity for a `PUT`, the payload for a custom command).
    public var body: Data
    /// Whether the request came inside a batch.
    public var inBatch: Bool
}

/// The collection and id of an entity.
struct EntityKey: Hashable, Sendable {
    var collection: String
    var id: String
}

/// The server's data: entities and their versions, the idempotency memory, the change feed and
/// the log of applied changes. A plain value; ``ServerStore`` guards it.
struct StoreEngine {
    private(set) var entities: [String: [String: StoredEntity]] = [:]
    /// The last version given to each entity, surviving its deletion.
    private var lastVersion: [EntityKey: Int] = [:]
    /// The change feed: `feed[n - 1]` is the entity changed at sequence number `n`.
    private var feed: [EntityKey] = []
    /// The latest sequence number of each entity: only that feed entry is served.
    private var latestSequence: [EntityKey: Int] = [:]
    /// The responses of successful pushes, by idempotency key, with the request they answered.
    var remembered: [String: RememberedPush] = [:]
    var applyCounts: [String: Int] = [:]
    var applied: [AppliedChange] = []

    func entity(_ collection: String, _ id: String) -> StoredEntity? { entities[collection]?[id] }

    /// Stores a new version of an entity and appends it to the change feed.
    mutating func store(_ collection: String, _ id: String, json: Data, partition: String) -> StoredEntity {
        let key = EntityKey(collection: collection, id: id)
        let version = (lastVersion[key] ?? 0) + 1
        lastVersion[key] = version
        let entity = StoredEntity(version: String(version), json: json, partition: partition)
        entities[collection, default: [:]][id] = entity
        appendToFeed(key)
        return entity
    }

    /// Deletes an entity (appending the deletion to the change feed); `false` when there was none.
    mutating func delete(_ collection: String, _ id: String) -> Bool {
        guard entities[collection]?.removeValue(forKey: id) != nil else { return false }
        appendToFeed(EntityKey(collection: collection, id: id))
        return true
    }

    private mutating func appendToFeed(_ key: EntityKey) {
        feed.append(key)
        latestSequence[key] = feed.count
    }

    /// Records an applied change: the log, and the key's count.
    mutating func recordApplied(_ change: AppliedChange) {
        applied.append(change)
        if let key = change.key { applyCounts[key, default: 0] += 1 }
    }

    /// The entities of a partition, sorted by id.
    func entities(in collection: String, partition: String) -> [(id: String, entity: StoredEntity)] {
        (entities[collection] ?? [:]).filter { $0.value.partition == partition }
            .sorted { $0.key < $1.key }
            .map { ($0.key, $0.value) }
    }

    /// One page of the change feed of a collection after `cursor`: each changed entity once, at
    /// the position of its latest change, with its current state (`nil`: deleted).
    func changes(in collection: String, after cursor: Int, limit: Int)
        -> (changes: [(id: String, entity: StoredEntity?)], cursor: Int, hasMore: Bool)
    {
        var changes: [(id: String, entity: StoredEntity?)] = []
        var sequence = max(0, cursor)
        while sequence < feed.count {
            let key = feed[sequence]
            sequence += 1
            guard key.collection == collection, latestSequence[key] == sequence else { continue }
            if changes.count == limit {
                // One more exists: stop before it.
                return (changes, sequence - 1, true)
            }
            changes.append((key.id, entities[collection]?[key.id]))
        }
        return (changes, max(cursor, feed.count), false)
    }
}

/// ``StoreEngine`` behind a lock.
///
/// Thread safety: every access to `state` holds `lock`; ``push(key:_:)`` runs its operation
/// under the lock, so checking the idempotency memory, applying and remembering are one atomic
/// step even when two connections carry the same key at once.
final class ServerStore: @unchecked Sendable {
    private let lock = NSLock()
    private var state = StoreEngine()

    /// Reads the state.
    func read<T>(_ body: (StoreEngine) -> T) -> T { lock.locked { body(state) } }

    /// The answer for a key seen before: the remembered response when `request` is the same
    /// request (method, path, body as a JSON value), else 422 naming the key. `nil` for a new key.
    func replay(_ key: String?, request: String) -> HTTPResponse? {
        guard let key else { return nil }
        return lock.locked { state.remembered[key].map { $0.answer(to: request, key: key) } }
    }

    /// Answers a key seen before as ``replay(_:request:)`` does, or runs `operation`; when it
    /// answers 2xx and reports a change, the change is logged and the response remembered under
    /// `key` with `request`. One lock around both, so two requests with one key never both apply.
    func push(
        key: String?, request: String, _ operation: (inout StoreEngine) -> (response: HTTPResponse, change: AppliedChange?)
    ) -> HTTPResponse {
        lock.locked {
            if let key, let remembered = state.remembered[key] { return remembered.answer(to: request, key: key) }
            let (response, change) = operation(&state)
            if response.isSuccess {
                if let change { state.recordApplied(change) }
                if let key { state.remembered[key] = RememberedPush(request: request, response: response) }
            }
            return response
        }
    }

    /// Changes the state directly (``TestServer/edit(_:_:json:partition:)`` and friends).
    func modify<T>(_ body: (inout StoreEngine) -> T) -> T { lock.locked { body(&state) } }
}

/// A successful push's response, remembered by its idempotency key with the request it answered.
struct RememberedPush: Sendable {
    /// The request's fingerprint: method, decoded path, canonical body (``Request/fingerprint``).
    var request: String
    var response: HTTPResponse

    /// The remembered response for the same request; 422 for another one under the same key
    /// (PROTOCOL.md: a key is never answered from another request's memory).
    func answer(to request: String, key: String) -> HTTPResponse {
        guard request == self.request else {
            return .error(422, "the Idempotency-Key \(key) was used for another request (\(self.request.prefix { $0 != "\n" })); a key names one request")
        }
        return response
    }
}
