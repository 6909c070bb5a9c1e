import Folio
import Foundation

/// The child ran out of its time (`--max-seconds`).
struct OutOfTime: Error, CustomStringConvertible {
    var description: String
}

/// The engine cannot send (a quarantined command file, say).
struct Blocked: Error, CustomStringConvertible {
    var description: String
}

/// Drains a store's outbox, pulls the change feeds, and describes the store.
struct ClientSync {
    let folder: URL
    let base: URL
    let deadline: ContinuousClock.Instant
    /// Commands per request (PROTOCOL.md's `_batch`); 1 sends each alone.
    var batchSize = 1

    /// Drains to the end, pulls (if asked), and returns the store's state as one line of JSON.
    func run(pull: Bool) async throws -> String {
        var configuration = SyncEngine.Configuration()
        configuration.sync(ConvergenceTodo.self)
        configuration.sync(ConvergenceTag.self)
        configuration.initialBackoff = .milliseconds(2)
        configuration.maxBackoff = .milliseconds(20)
        configuration.maxAttempts = 1000
        configuration.pollInterval = nil
        var options = HTTPTransport.Options()
        options.requestTimeout = .seconds(2)
        options.batchSize = batchSize
        let store = try await Store.open(at: folder)
        let engine = SyncEngine(store: store, transport: HTTPTransport(baseURL: base, options: options), configuration: configuration)
        while true {
            try checkTime("draining")
            let report = try await engine.drainNow()
            if report.remaining == 0 && report.nextAttempt == nil { break }
            if let reason = await engine.status.blockedReason { throw Blocked(description: "the outbox is blocked: \(reason)") }
            try await Task.sleep(for: .milliseconds(2))
        }
        if pull {
            try await retrying("pulling todos") { try await engine.pullChanges(ConvergenceTodo.self) }
            try await retrying("pulling tags") { try await engine.pullChanges(ConvergenceTag.self) }
        }
        let state = try await describe(store)
        try await store.close()
        return state
    }

    /// Runs a pull until it gets through the faults (a pull has no idempotency to care about).
    private func retrying(_ what: String, _ body: () async throws -> Int) async throws {
        var lastError: (any Error)?
        while ContinuousClock.now < deadline {
            do {
                _ = try await body()
                return
            } catch let error as FolioError where error.code == .network || error.code == .badResponse {
                lastError = error
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        throw OutOfTime(description: "\(what): \(lastError.map { "\($0)" } ?? "no attempt")")
    }

    private func checkTime(_ what: String) throws {
        if ContinuousClock.now >= deadline { throw OutOfTime(description: "still \(what) after --max-seconds") }
    }

    /// `{"failed": [...], "pending": N, "tags": {id: tag}, "todos": {id: todo}}`.
    private func describe(_ store: Store) async throws -> String {
        struct State: Encodable {
            var todos: [String: ConvergenceTodo]
            var tags: [String: ConvergenceTag]
            var pending: Int
            var failed: [String]
        }
        let todos = try await store.fetch(Query<ConvergenceTodo>())
        let tags = try await store.fetch(Query<ConvergenceTag>())
        let state = State(
            todos: Dictionary(todos.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }),
            tags: Dictionary(tags.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }),
            pending: try await store.pendingCommandCount(),
            failed: try await store.failedCommands().map { "\($0.command.sequence) \($0.command.entityID ?? "-"): \($0.reason)" })
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(state), as: UTF8.self)
    }
}
