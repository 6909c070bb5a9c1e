import Foundation

/// Seeding the outbox group's stores (Runner+Outbox.swift), once per run: per length, a Folio
/// store and a SQLite database with the same entities (OutboxData) and that many pending commands.
extension Runner {
    /// Seeds a store per outbox length (timed apart, reported, not a row) and finds the `folio`
    /// tool (built if needed). Each collection holds, in whole years of the one-year workload's
    /// density, at least 0.6 times the longest outbox's entities, so its pending entities are a
    /// part of them (three years, 60,000 todos and drafts, for 50,000 commands).
    func prepareOutbox() async throws {
        let lengths = options.outboxLengths
        let perDay = Double(options.todos) / 365
        let years = max(1, Int((0.6 * Double(lengths[lengths.count - 1]) / (perDay * 365)).rounded(.up)))
        let data = OutboxData(seed: options.seed, todosPerDay: perDay, days: 365 * years)
        outbox.data = data
        for length in lengths {
            let folio = scratch.appendingPathComponent("outbox-\(length)-folio", isDirectory: true)
            let grdb = scratch.appendingPathComponent("outbox-\(length).sqlite")
            let (todos, drafts) = data.pending(length: length)
            guard !todos.isEmpty, !drafts.isEmpty else { throw BenchError("an outbox of \(length) commands holds no draft") }
            let start = ContinuousClock.now
            try await FolioContender.seedOutbox(folio, data: data, pendingTodos: todos, pendingDrafts: drafts)
            let seeded = ContinuousClock.now
            try GRDBContender.seedOutbox(grdb.path, data: data, pendingTodos: todos, pendingDrafts: drafts)
            outbox.seedSeconds[length] = ((seeded - start).seconds, (ContinuousClock.now - seeded).seconds)
            outbox.stores.append(OutboxStore(folio: folio, grdb: grdb, length: length, pendingTodos: todos, pendingDrafts: drafts))
            say(
                "outbox: seeded \(Format.count(length)) pending commands in \(Format.value((seeded - start).seconds)) s (Folio), "
                    + "\(Format.value((ContinuousClock.now - seeded).seconds)) s (GRDB)")
        }
        switch FolioCLI.locate(given: options.folioCLI, log: say) {
        case .success(let tool): outbox.cli = tool
        case .failure(let problem):
            outbox.cliProblem = problem.description
            say("outbox: the folio tool's rows are NOT measured: \(problem)")
        }
    }
}
