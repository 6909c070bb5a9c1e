public import Foundation

/// A dependency-free HTTP/1.1 server on 127.0.0.1 that implements PROTOCOL.md (pushes with
/// idempotency keys and versions, batches, pulls by partition and by cursor) and injects faults
/// on demand, for the sync tests.
///
/// It listens from `init` on a port the kernel picks, serves every connection on a thread of its
/// own, and keeps everything in memory. Call ``stop()`` when done (`defer { server.stop() }`).
///
/// Thread safety: `lock` guards the configuration and the request counters and logs; the data
/// (``ServerStore``) and the faults (``FaultQueue``) have locks of their own. Every public member
/// can be used from any thread; the inspection members return snapshots.
public final class TestServer: @unchecked Sendable {
    /// The port the server listens on.
    public let port: UInt16

    let store = ServerStore()
    let faults = FaultQueue()
    let listener: Listener

    private let lock = NSLock()
    private var requiredTokenValue: String?
    private var permanentRejectionValue: (@Sendable (Request) -> Bool)?
    private var changePageSizeValue = 500
    private var servedCollectionsValue: Set<String>?
    private var serverComputedCollectionsValue: Set<String> = []
    private var servesChangeFeedValue = true
    private var recordsRequestsValue = true
    private var requestCountValue = 0
    private var requestsValue: [Request] = []
    private var pushesValue: [Request] = []

    /// Starts listening on 127.0.0.1, on a port the kernel picks.
    public init() throws {
        listener = try Listener()
        port = listener.port
        listener.start { [weak self, listener] fd in
            Connection(fd: fd, listener: listener).run { [weak self] message in self?.reply(to: message) }
        }
    }

    deinit { listener.stop() }

    /// The protocol's `{base}`: `http://127.0.0.1:PORT/api/`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/api/")! }

    /// The URL of a collection, or of an entity in it, with each segment percent-encoded as the
    /// protocol says (`/` in an id becomes `%2F`).
    public func url(_ collection: String, _ id: String? = nil) -> URL {
        var path = Request.encodeSegment(collection)
        if let id { path += "/" + Request.encodeSegment(id) }
        return URL(string: baseURL.absoluteString + path)!
    }

    /// Closes the listener and every open connection (a request in flight is dropped), and
    /// returns when the accept thread and the connection threads have finished (waiting at most
    /// 2 seconds). Idempotent.
    public func stop() { listener.stop() }

    // MARK: Faults

    /// Queues a fault: the next `times` requests in `scope` (by default, pushes) for which
    /// `matches` is true suffer it. Queued faults are consumed in FIFO order; a request takes at
    /// most one. A batch is first matched as a whole (`Request.isBatch`); then, as far as it is
    /// processed, each request inside it (`Request.inBatch`) is matched in turn: a status there
    /// becomes that request's response (and ends the batch), a drop drops the whole batch (the
    /// requests before it stay applied), garbage or oversized replace the whole batch's answer.
    /// Aim a fault at requests inside batches with a matcher such as `{ $0.inBatch && $0.id == "T3" }`.
    ///
    /// `matches` runs under the fault queue's lock: it must not call ``inject(_:times:on:where:)``
    /// or set ``randomFaults``.
    public func inject(
        _ fault: Fault, times: Int = 1, on scope: FaultScope = .pushes,
        where matches: @escaping @Sendable (Request) -> Bool = { _ in true }
    ) {
        faults.add(fault, times: times, scope: scope, matches: matches)
    }

    /// When set, each push request (a batch counts as one) that no injected fault hit suffers a
    /// random fault with the given probability, from a generator seeded with its seed (setting
    /// this restarts the sequence). `nil` (the default) turns random faults off.
    public var randomFaults: RandomFaults? {
        get { faults.randomFaults }
        set { faults.randomFaults = newValue }
    }

    /// How many injected faults are still queued (counting each remaining time).
    public var pendingFaultCount: Int { faults.pendingCount }

    /// How many faults (injected and random) hit a request so far.
    public var firedFaultCount: Int { faults.firedCount }

    /// Drops every queued fault (random faults stay as they are).
    public func removeAllFaults() { faults.removeAll() }

    // MARK: Behaviour

    /// When set, a request without `Authorization: Bearer <token>` gets 401 (before any fault).
    /// The scheme name is compared case-insensitively (`bearer` is `Bearer`).
    public var requiredToken: String? {
        get { lock.locked { requiredTokenValue } }
        set { lock.locked { requiredTokenValue = newValue } }
    }

    /// When set, a push (alone or in a batch) for which it returns true gets 400
    /// `{"error":"rejected by test"}` and is not applied. A repeated idempotency key whose first
    /// request succeeded still gets its remembered response (or 422 for another request).
    public var permanentRejection: (@Sendable (Request) -> Bool)? {
        get { lock.locked { permanentRejectionValue } }
        set { lock.locked { permanentRejectionValue = newValue } }
    }

    /// The collections clients may push to and pull; any other name is 404 (a client then stores
    /// and deletes nothing). `nil` (the default): every valid collection name.
    public var servedCollections: Set<String>? {
        get { lock.locked { servedCollectionsValue } }
        set { lock.locked { servedCollectionsValue = newValue } }
    }

    /// Server-computed (pull-only) collections: served to pulls (fill them with
    /// ``edit(_:_:json:partition:)``), a push to them is 405 with `Allow: GET`.
    public var serverComputedCollections: Set<String> {
        get { lock.locked { serverComputedCollectionsValue } }
        set { lock.locked { serverComputedCollectionsValue = newValue } }
    }

    /// Whether the change feed (`?since=`) is served (default true); when false it is 501, as
    /// on a server that answers pulls by partition only.
    public var servesChangeFeed: Bool {
        get { lock.locked { servesChangeFeedValue } }
        set { lock.locked { servesChangeFeedValue = newValue } }
    }

    /// The most changes one page of the change feed holds (default 500); later changes set `hasMore`.
    public var changePageSize: Int {
        get { lock.locked { changePageSizeValue } }
        set {
            precondition(newValue > 0, "a page holds at least one change")
            lock.locked { changePageSizeValue = newValue }
        }
    }

    /// Whether ``requests`` and ``pushes`` are recorded (default true; turn off for long benchmarks).
    public var recordsRequests: Bool {
        get { lock.locked { recordsRequestsValue } }
        set { lock.locked { recordsRequestsValue = newValue } }
    }

    // MARK: Inspection

    /// The entity as stored, or `nil` when there is none (never stored, or deleted).
    public func entity(_ collection: String, _ id: String) -> StoredEntity? {
        store.read { $0.entity(collection, id) }
    }

    /// Every entity of a collection, by id.
    public func entities(_ collection: String) -> [String: StoredEntity] {
        store.read { $0.entities[collection] ?? [:] }
    }

    /// How many times a request with this idempotency key was applied (exactly once must mean ≤ 1).
    public func applyCount(forKey key: String) -> Int {
        store.read { $0.applyCounts[key] ?? 0 }
    }

    /// The largest ``applyCount(forKey:)`` over every key (0 when nothing was applied).
    public var maxAppliedCountPerKey: Int {
        store.read { $0.applyCounts.values.max() ?? 0 }
    }

    /// Every change applied on behalf of a client, in order (not the ``edit(_:_:json:partition:)``
    /// and ``remove(_:_:)`` of simulated other clients).
    public var appliedLog: [AppliedChange] { store.read { $0.applied } }

    /// Whether a successful response is remembered for this idempotency key.
    public func remembersKey(_ key: String) -> Bool {
        store.read { $0.remembered[key] != nil }
    }

    /// Forgets every remembered response, as a server does after a while: a repeated key is then
    /// applied again.
    public func forgetIdempotencyKeys() {
        store.modify { $0.remembered.removeAll() }
    }

    /// How many HTTP requests the server received and could parse (a batch counts as one).
    public var requestCount: Int { lock.locked { requestCountValue } }

    /// Every HTTP request received, in order (when ``recordsRequests``).
    public var requests: [Request] { lock.locked { requestsValue } }

    /// Every push the server processed, alone or inside a batch (`inBatch`), in order, including
    /// replays and rejected ones but not those a fault stopped first (when ``recordsRequests``).
    public var pushes: [Request] { lock.locked { pushesValue } }

    /// Resets ``requestCount``, ``requests``, ``pushes``, ``appliedLog``, the apply counts and
    /// ``firedFaultCount``. The entities, the change feed, the idempotency memory and the
    /// queued faults stay.
    public func resetCounters() {
        lock.locked {
            requestCountValue = 0
            requestsValue.removeAll()
            pushesValue.removeAll()
        }
        store.modify {
            $0.applied.removeAll()
            $0.applyCounts.removeAll()
        }
        faults.resetFiredCount()
    }

    // MARK: Simulating another client

    /// Stores `json` as a new version of an entity, as another client would: it appears in pulls
    /// and in the change feed (not in ``appliedLog``). Returns the new version.
    @discardableResult
    public func edit(_ collection: String, _ id: String, json: Data, partition: String) -> String {
        precondition(JSONText.isValid(json), "TestServer.edit needs valid JSON")
        return store.modify { $0.store(collection, id, json: json, partition: partition).version }
    }

    /// Deletes an entity, as another client would: it disappears from pulls and appears as
    /// deleted in the change feed. Returns whether there was one.
    @discardableResult
    public func remove(_ collection: String, _ id: String) -> Bool {
        store.modify { $0.delete(collection, id) }
    }

    // MARK: Internal bookkeeping

    func noteRequest(_ request: Request) {
        lock.locked {
            requestCountValue += 1
            if recordsRequestsValue { requestsValue.append(request) }
        }
    }

    func notePush(_ request: Request) {
        lock.locked {
            if recordsRequestsValue { pushesValue.append(request) }
        }
    }
}
