import Folio
import Foundation

enum SyncCommand {
    /// `todo sync --server URL [--token TOKEN] [--attempts N]`: sends the outbox to a PROTOCOL.md
    /// server, in order, then pulls the server's tags, todos and daily stats.
    ///
    /// Safe to kill at any instant, and to run again: a change leaves the outbox only once the
    /// server acknowledged it, and a change sent again (its answer was lost in the kill) carries
    /// the same idempotency key, so the server applies it once. Pulls never clobber a change
    /// that is still pending.
    static func run(_ arguments: Arguments, _ store: Store) async throws {
        _ = try arguments.positional(0, "no arguments")
        guard let text = arguments.value("server") ?? ProcessInfo.processInfo.environment["TODO_SERVER"] else {
            throw UsageError("give the server's base URL with --server URL (or TODO_SERVER)")
        }
        guard let server = URL(string: text), ["http", "https"].contains(server.scheme?.lowercased() ?? ""), server.host != nil else {
            throw UsageError("\"\(text)\" is not an http(s) URL")
        }
        let attempts = try arguments.value("attempts").map(parseAttempts) ?? 3

        var configuration = SyncEngine.Configuration()
        configuration.sync(Todo.self)   // conflicts: three-way merge, field by field
        configuration.sync(Tag.self)
        configuration.sync(DailyStat.self)   // pull-only: the server computes it
        configuration.pollInterval = nil   // a one-shot run: nothing to poll for
        // An app that keeps the engine running would also say
        // `configuration.refresh(DailyStat.self, after: Todo.self)`; this one-shot run pulls every
        // month it holds once at the end instead, which also covers pushes of a run that was killed.
        let token = arguments.value("token") ?? ProcessInfo.processInfo.environment["TODO_TOKEN"]
        let transport = HTTPTransport(baseURL: server, auth: token.map { StaticAuthorization("Bearer " + $0) })
        let engine = SyncEngine(store: store, transport: transport, configuration: configuration)

        // The user asks to sync now: a wait caused by the network ends (one the server asked
        // for, e.g. Retry-After, still holds).
        await engine.networkBecameAvailable()

        // 1. Push, strictly in order. A pass stops at the first failure that needs waiting (the
        //    server is down, answers 5xx or 429): wait as asked and try again, a few times.
        var (sent, refused, conflicts) = (0, 0, 0)
        for attempt in 1...attempts {
            let pass = try await engine.drainNow()
            sent += pass.sent
            refused += pass.deadLettered
            conflicts += pass.conflicts
            let status = await engine.status
            if let blocked = status.blockedReason { throw Failure("sync is blocked: \(blocked)") }
            if pass.remaining == 0 { break }
            if !status.isOnline || attempt == attempts {
                throw Failure(
                    "sent \(sent) change\(plural(sent)); \(pass.remaining) still wait in the outbox: "
                        + "\(status.lastError ?? pass.stoppedBecause ?? "the server did not take them"). Run `todo sync` again later.")
            }
            let wait = min(max((pass.nextAttempt ?? Date()).timeIntervalSinceNow, 0), 10)
            try await Task.sleep(for: .milliseconds(Int(wait * 1000) + 20))   // never wake before the time
        }

        // 2. Pull what the server has: other devices' changes, and the stats it derived from ours.
        let tags = try await engine.pull(Tag.self, partition: "")
        let todos = try await pullTodos(engine, store)
        var stats = 0
        for month in try await months(store) {
            stats += try await engine.pull(DailyStat.self, partition: month)
        }

        print(
            "sent \(sent) change\(plural(sent))"
                + (conflicts > 0 ? " (\(conflicts) conflict\(plural(conflicts)) settled)" : "")
                + "; pulled \(tags) tag\(plural(tags)), \(todos) todo\(plural(todos)), \(stats) daily stat\(plural(stats)) changed")
        let failed = try await store.failedCommands()
        if !failed.isEmpty {
            for command in failed.suffix(10) {
                print("  refused: \(command.command.collection ?? "")/\(command.command.entityID ?? "") \(command.command.operation): \(command.reason)")
            }
            let message = "\(failed.count) change\(plural(failed.count)) refused by the server stay local only (outbox/failed/)"
            // Refused in this run: the caller must hear of it. Refused earlier: said again, softly.
            if refused > 0 { throw Failure(message) }
            print(message)
        }
    }

    /// Todos from the server's change feed (every change since the last pull, kept in
    /// `.folio/sync.json`), or, from a server without one, the days this folder holds.
    private static func pullTodos(_ engine: SyncEngine, _ store: Store) async throws -> Int {
        do {
            return try await engine.pullChanges(Todo.self)
        } catch let error as FolioError where error.code == .badResponse {
            var count = 0
            for day in Set(try await store.fetch(Query<Todo>()).map(\.date)).sorted() {
                count += try await engine.pull(Todo.self, partition: day)
            }
            return count
        }
    }

    /// The months whose stats this folder shows: those of its todos and of its stats.
    private static func months(_ store: Store) async throws -> [String] {
        let days = try await store.fetch(Query<Todo>()).map(\.date) + store.fetch(Query<DailyStat>()).map(\.date)
        return Set(days.map { String($0.prefix(7)) }).sorted()
    }

    private static func parseAttempts(_ text: String) throws(UsageError) -> Int {
        guard let count = Int(text), (1...100).contains(count) else { throw UsageError("--attempts is 1 to 100, not \"\(text)\"") }
        return count
    }

    private static func plural(_ count: Int) -> String { count == 1 ? "" : "s" }
}
