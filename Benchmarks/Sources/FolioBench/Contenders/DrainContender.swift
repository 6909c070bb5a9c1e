import Folio
import FolioTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The drain contenders (moved here from the root package's former `folio-drain-bench`): raw
/// sequential URLSession requests, and Folio's SyncEngine draining a store one request per command
/// and in batches, all to one FolioTestServer on 127.0.0.1. Each run uses ids of its own, so runs
/// never meet on the server, and every Folio run is checked: each command applied exactly once,
/// nothing left pending.
enum DrainContender {
    /// How many commands a batched request carries.
    static let batchSize = 100
    /// The longest one request may take before the run fails.
    static let requestTimeout: Duration = .seconds(10)

    /// The pushed entity of the drain: a todo, so the bodies are the workload's.
    static func item(_ index: Int, prefix: String, workload: Workload) -> Todo {
        var todo = workload.todos[index % workload.todos.count]
        todo.id = prefix + "-" + String(format: "%07d", index)
        return todo
    }

    /// `count` sequential `PUT {base}/todos/{id}` requests, each awaited before the next, with the
    /// headers and body bytes Folio sends for a new entity (taken from a store's queued commands
    /// before the clock starts): the limit of sequential requests to this server.
    static func raw(server: TestServer, count: Int, prefix: String, workload: Workload, scratch: URL) async throws -> Duration {
        let bodies = try await folioBodies(count: count, prefix: prefix, workload: workload, scratch: scratch)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = requestTimeout.seconds
        configuration.timeoutIntervalForResource = requestTimeout.seconds
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }

        let keyPrefix = UUID().uuidString + "-"
        var requests: [URLRequest] = []
        requests.reserveCapacity(count)
        for (index, (item, body)) in bodies.enumerated() {
            var request = URLRequest(url: server.url(Todo.collection, item.id))
            request.httpMethod = "PUT"
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue(keyPrefix + String(format: "%020d", index + 1), forHTTPHeaderField: "Idempotency-Key")
            request.setValue("*", forHTTPHeaderField: "If-None-Match")
            request.setValue(item.date, forHTTPHeaderField: "Folio-Partition")
            requests.append(request)
        }

        let start = ContinuousClock.now
        for (index, request) in requests.enumerated() {
            let (_, response) = try await session.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 201 else { throw BenchError("raw request \(index) (\(prefix)) got status \(status), expected 201") }
        }
        return ContinuousClock.now - start
    }

    /// `count` todos written into a fresh store and checkpointed (not timed: the outbox fills as
    /// an offline app fills it), then `SyncEngine.drainNow()` timed until the queue is empty.
    static func folio(server: TestServer, count: Int, prefix: String, batchSize: Int, workload: Workload, scratch: URL) async throws -> Duration {
        let folder = scratch.appendingPathComponent(prefix, isDirectory: true)
        let store = try await Store.open(at: folder, configuration: Store.Configuration(durability: .relaxed))
        try await fill(store, count: count, prefix: prefix, workload: workload)

        var configuration = SyncEngine.Configuration()
        configuration.sync(Todo.self)
        configuration.pollInterval = nil
        var options = HTTPTransport.Options()
        options.batchSize = batchSize
        options.requestTimeout = requestTimeout
        let engine = SyncEngine(
            store: store, transport: HTTPTransport(baseURL: server.baseURL, options: options),
            configuration: configuration)
        // A pass ends early only on a failure (this server injects none); a few passes allow for
        // a stray network error, then the run fails.
        let maxPasses = 10
        var passes = 0
        var sent = 0
        let profiling = Profiling(batchSize: batchSize)
        profiling.enable()
        let start = ContinuousClock.now
        while true {
            let report = try await engine.drainNow()
            passes += 1
            sent += report.sent
            if report.remaining == 0 { break }
            guard passes < maxPasses else {
                throw BenchError("\(prefix): \(report.remaining) commands still queued after \(passes) drain passes: \(report.stoppedBecause ?? "?")")
            }
        }
        let elapsed = ContinuousClock.now - start
        profiling.disable()
        await engine.stop()

        let pending = try await store.pendingCommandCount()
        try await store.close()
        let applied = server.appliedLog.filter { $0.id.hasPrefix(prefix + "-") }
        guard sent == count, pending == 0 else { throw BenchError("\(prefix): \(sent) sent, \(pending) pending, expected \(count) and 0") }
        guard applied.count == count, Set(applied.map(\.id)).count == count else {
            throw BenchError("\(prefix): the server applied \(applied.count) commands (\(Set(applied.map(\.id)).count) distinct), expected \(count)")
        }
        guard server.maxAppliedCountPerKey == 1 else { throw BenchError("\(prefix): an idempotency key was applied twice") }
        return elapsed
    }

    /// The bodies Folio queues for the run's items, read back from a scratch store's outbox.
    private static func folioBodies(count: Int, prefix: String, workload: Workload, scratch: URL) async throws -> [(Todo, Data)] {
        try await folioCommands(count: count, prefix: prefix, workload: workload, scratch: scratch).enumerated().map { index, command in
            guard let body = command.body else { throw BenchError("\(prefix): command \(index) has no body") }
            return (item(index, prefix: prefix, workload: workload), body)
        }
    }

    /// The commands Folio queues for the run's items, read back from a scratch store's outbox.
    private static func folioCommands(count: Int, prefix: String, workload: Workload, scratch: URL) async throws -> [OutboxCommand] {
        let folder = scratch.appendingPathComponent(prefix + "-bodies", isDirectory: true)
        let store = try await Store.open(at: folder, configuration: Store.Configuration(durability: .relaxed))
        try await fill(store, count: count, prefix: prefix, workload: workload)
        let commands = try await store.pendingCommands()
        try await store.close()
        guard commands.count == count else { throw BenchError("\(prefix): \(commands.count) bodies, expected \(count)") }
        return commands
    }

    /// `count` of Folio's commands pushed through its `HTTPTransport` alone, one request each
    /// (`batchSize` 1) or in batches, each awaited before the next: a client that keeps
    /// PROTOCOL.md (the bounded loader's delegate, its redirect rule, every answer parsed and
    /// checked) without the store, the sync engine or the outbox. The requests are built before
    /// the clock from a scratch store's queued commands, as the sync engine builds a new entity's
    /// (`If-None-Match: *`). Between raw URLSession and Folio's drain: what keeping the protocol
    /// costs, and what the store adds to it.
    static func transport(server: TestServer, count: Int, prefix: String, batchSize: Int, workload: Workload, scratch: URL) async throws
        -> Duration
    {
        let requests = try await folioCommands(count: count, prefix: prefix, workload: workload, scratch: scratch).map { command in
            PushRequest(command: command, body: command.body, precondition: .absent, idempotencyKey: command.id)
        }
        var options = HTTPTransport.Options()
        options.batchSize = batchSize
        options.requestTimeout = requestTimeout
        let transport = HTTPTransport(baseURL: server.baseURL, options: options)
        let start = ContinuousClock.now
        for first in stride(from: 0, to: requests.count, by: batchSize) {
            let window = Array(requests[first..<min(first + batchSize, requests.count)])
            let outcomes = window.count == 1 ? [try await transport.push(window[0])] : try await transport.push(batch: window)
            for (index, outcome) in outcomes.enumerated() {
                guard case .applied = outcome else { throw BenchError("\(prefix): request \(first + index) got \(outcome), expected applied") }
            }
            guard outcomes.count == window.count else { throw BenchError("\(prefix): \(outcomes.count) outcomes for \(window.count) requests") }
        }
        let elapsed = ContinuousClock.now - start
        let applied = server.appliedLog.filter { $0.id.hasPrefix(prefix + "-") }
        guard applied.count == count, Set(applied.map(\.id)).count == count else {
            throw BenchError("\(prefix): the server applied \(applied.count) commands (\(Set(applied.map(\.id)).count) distinct), expected \(count)")
        }
        return elapsed
    }

    private static func fill(_ store: Store, count: Int, prefix: String, workload: Workload) async throws {
        for first in stride(from: 0, to: count, by: 100) {
            let items = (first..<min(first + 100, count)).map { item($0, prefix: prefix, workload: workload) }
            try await store.write { tx in
                for item in items { try tx.upsert(item) }
            }
        }
        try await store.checkpoint()
    }

    /// Turns a `perf record --control fifo:…` on for the timed drain only, when
    /// `FOLIO_BENCH_PERF_CONTROL` names the control FIFO (and `FOLIO_BENCH_PERF_BATCH`, if set,
    /// the batch size to profile): `perf record -D -1 --control fifo:ctl,ack -g folio-bench …`.
    private struct Profiling {
        let control: String?

        init(batchSize: Int) {
            let environment = ProcessInfo.processInfo.environment
            let wanted = environment["FOLIO_BENCH_PERF_BATCH"].flatMap(Int.init)
            control = wanted == nil || wanted == batchSize ? environment["FOLIO_BENCH_PERF_CONTROL"] : nil
        }

        func enable() { send("enable\n") }
        func disable() { send("disable\n") }

        private func send(_ command: String) {
            guard let control, let handle = FileHandle(forWritingAtPath: control) else { return }
            handle.write(Data(command.utf8))
            try? handle.close()
        }
    }
}
