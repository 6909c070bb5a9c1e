public import Foundation

/// Sends the outbox to the server, strictly in order and exactly once, and pulls server state
/// back into the store.
///
/// ```swift
/// var configuration = SyncEngine.Configuration()
/// configuration.sync(Todo.self)
/// configuration.sync(Tag.self)
/// configuration.refresh(DailyStat.self, after: Todo.self)
/// let sync = SyncEngine(store: store, transport: HTTPTransport(baseURL: server), configuration: configuration)
/// await sync.start()
/// ```
///
/// Once started, the engine drains by itself: when a transaction queues commands, when the app
/// reports the network back (``networkBecameAvailable()``; on Apple platforms `NWPathMonitor`
/// reports it too), at start, when a backoff delay ends, and every
/// ``Configuration/pollInterval`` for commands queued by another process. A command is sent
/// only after every earlier one was acknowledged or dead-lettered; a command whose answer was lost
/// is sent again with the same idempotency key (PROTOCOL.md).
///
/// ## Topics
/// ### Running
/// - ``start()``
/// - ``stop()``
/// - ``drainNow()``
/// - ``networkBecameAvailable()``
/// ### Pulling
/// - ``pull(_:partition:)``
/// - ``pullChanges(_:)``
/// ### Watching
/// - ``status``
/// - ``events()``
public actor SyncEngine {
    let store: Store
    let transport: any Transport
    let configuration: Configuration
    let coder = EntityCoder()
    var generator = SystemRandomNumberGenerator()

    /// Where syncing stands.
    public internal(set) var status = SyncStatus()

    // The loop, and what wakes it.
    private var loop: Task<Void, Never>?
    private var listenerToken: UUID?
    private var wakeContinuation: CheckedContinuation<Void, Never>?
    private var wakePending = false
    /// Set by ``networkBecameAvailable()``: the next pass ignores backoff delays.
    var ignoreBackoffOnce = false
    /// Drain passes and pulls run one at a time: order is the point.
    private var gate = AsyncGate()
    private var isStopped = false
    private var subscribers: [UUID: AsyncStream<SyncEvent>.Continuation] = [:]
    /// Reports the network back, where the platform can (NetworkMonitor.swift).
    private var networkMonitor: (any NetworkMonitor)?

    /// Creates an engine; it does nothing until ``start()`` or ``drainNow()``.
    /// - Parameters:
    ///   - store: The store whose outbox it drains.
    ///   - transport: How it talks to the server (``HTTPTransport`` for PROTOCOL.md).
    ///   - configuration: The collections it knows, conflict policies, retry limits.
    public init(store: Store, transport: any Transport, configuration: Configuration = Configuration()) {
        self.store = store
        self.transport = transport
        self.configuration = configuration
    }

    // MARK: Running

    /// Starts draining: now, and from then on by itself (see ``SyncEngine``).
    public func start() async {
        guard loop == nil else { return }
        isStopped = false
        status.isRunning = true
        listenerToken = await store.addOutboxListener { [weak self] in
            Task { await self?.wake() }
        }
        networkMonitor = makeNetworkMonitor { [weak self] in
            Task { await self?.networkBecameAvailable() }
        }
        loop = Task { await self.run() }
    }

    /// Stops draining. When this returns, no request is in flight and the engine touches neither
    /// the store nor the network until started again.
    public func stop() async {
        isStopped = true
        status.isRunning = false
        if let token = listenerToken { await store.removeOutboxListener(token) }
        listenerToken = nil
        networkMonitor?.cancel()
        networkMonitor = nil
        let running = loop
        loop = nil
        running?.cancel()
        wake()
        await running?.value
        // Wait for a drainNow() or pull in progress: they stop at their next step.
        await enterGate()
        gate.leave()
        isStopped = false
    }

    /// Tells the engine the network is back: it tries the queue at once, without waiting for a
    /// backoff delay to end when the last attempt could not reach the server (a delay the server
    /// asked for, or one after a server error, still holds).
    public func networkBecameAvailable() {
        ignoreBackoffOnce = true
        markReachable()
        wake()
    }

    /// Sends what can be sent now and returns when the queue is empty, blocked, or met a failure
    /// that needs waiting. For pull-to-refresh, command line tools and tests.
    ///
    /// Backoff delays hold here too, across calls and across processes (they are kept in
    /// `.folio/attempts.json`): a command the server asked to wait (`Retry-After`) or that failed
    /// recently is not sent before its time; the report then says which command waits, why, and
    /// until when (``DrainReport/nextAttempt``, ``DrainReport/stoppedBecause``).
    /// - Returns: What the pass did.
    /// - Throws: ``FolioError`` if the store cannot be read or written.
    @discardableResult
    public func drainNow() async throws -> DrainReport {
        try await exclusive { try await self.drainPass() }
    }

    /// The events from now on, until the stream is cancelled. Each call makes a new stream.
    public func events() -> AsyncStream<SyncEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncEvent.self, bufferingPolicy: .bufferingNewest(1000))
        let token = UUID()
        subscribers[token] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(token) }
        }
        return stream
    }

    private func unsubscribe(_ token: UUID) {
        subscribers[token] = nil
    }

    func emit(_ event: SyncEvent) {
        for subscriber in subscribers.values { subscriber.yield(event) }
    }

    /// Runs `body` alone among drain passes and pulls.
    func exclusive<R>(_ body: () async throws -> R) async throws -> R {
        await enterGate()
        defer { gate.leave() }
        try checkNotStopped()
        return try await body()
    }

    private func enterGate() async {
        if !gate.tryEnter() { await withCheckedContinuation { gate.enqueue($0) } }
    }

    func checkNotStopped() throws {
        if isStopped || Task.isCancelled { throw CancellationError() }
    }

    // MARK: The loop

    private func run() async {
        while !Task.isCancelled {
            var wait: Duration? = configuration.pollInterval
            do {
                let report = try await exclusive { try await self.drainPass() }
                if let next = report.nextAttempt { wait = .milliseconds(max(0, Int64(next.timeIntervalSinceNow * 1000))) }
            } catch is CancellationError {
                return
            } catch {
                status.lastError = "\(error)"
                await store.report(.error, "sync pass failed: \(error)")
                wait = configuration.initialBackoff
            }
            if Task.isCancelled { return }
            await sleep(upTo: wait)
        }
    }

    func wake() {
        if let continuation = wakeContinuation {
            wakeContinuation = nil
            continuation.resume()
        } else {
            wakePending = true
        }
    }

    /// Waits for a wake-up, or `limit` (nil: no limit), or cancellation.
    private func sleep(upTo limit: Duration?) async {
        if wakePending {
            wakePending = false
            return
        }
        let timer = limit.map { limit in
            Task { [weak self] in
                do { try await Task.sleep(for: limit) } catch { return }
                await self?.wake()
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { wakeContinuation = $0 }
        } onCancel: {
            Task { await self.wake() }
        }
        timer?.cancel()
        wakePending = false
    }
}

/// What one drain pass did.
public struct DrainReport: Sendable, Equatable {
    /// Commands the server acknowledged.
    public var sent = 0
    /// Commands moved to `outbox/failed/`.
    public var deadLettered = 0
    /// Conflicts settled.
    public var conflicts = 0
    /// Commands still waiting.
    public var remaining = 0
    /// When the next attempt is due, if the pass stopped on a failure.
    public var nextAttempt: Date?
    /// Why the pass stopped early, if it did.
    public var stoppedBecause: String?
}
