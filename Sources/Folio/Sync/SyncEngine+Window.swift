internal import Foundation

/// A window of the queue: sent as one batch, or one request per command in order, with the
/// commands the server applied acknowledged together.
///
/// Acknowledging a window in one transaction keeps every promise of PROTOCOL.md: a command is
/// still sent only after the previous one was answered, and one whose acknowledgement a crash
/// loses is pending again, sent again under its idempotency key, and answered from the server's
/// memory with the same status and version. What the window changes is only how many commands a
/// crash can send twice (at most one window; two in batches, whose answers are recorded while the
/// next batch is out), never how many are applied twice (none).
extension SyncEngine {
    /// The most commands of a one-request-per-command drain acknowledged in one transaction.
    static let oneByOneWindow = 100
    /// The longest a server's answer waits to be recorded while the window goes on, so that the
    /// app sees its changes leave the queue promptly.
    static let acknowledgementDelay: Duration = .milliseconds(100)

    /// Commands the server applied, not recorded yet, in the order they were sent.
    struct AppliedPushes {
        struct Item {
            var request: PushRequest
            var version: String?
            var entity: Data?
            var advancingVersion: Bool
        }
        var items: [Item] = []
        var since: ContinuousClock.Instant?
        var isEmpty: Bool { items.isEmpty }
        var count: Int { items.count }

        mutating func append(_ item: Item) {
            if items.isEmpty { since = .now }
            items.append(item)
        }

        /// Whether a command of this entity waits to be recorded: a later command of the entity
        /// reads the version its acknowledgement stores, so that is recorded first.
        func concerns(_ command: OutboxCommand) -> Bool {
            guard let collection = command.collection, let id = command.entityID else { return false }
            return items.contains { $0.request.command.collection == collection && $0.request.command.entityID == id }
        }

        /// Whether a command of one of these entities waits to be recorded (``concerns(_:)`` for a
        /// window).
        func concernsAny(_ commands: [OutboxCommand]) -> Bool {
            guard !items.isEmpty else { return false }
            let entities = Set(items.compactMap { item in item.request.command.entityID.map { (item.request.command.collection ?? "") + "/" + $0 } })
            return commands.contains { command in command.entityID.map { entities.contains((command.collection ?? "") + "/" + $0) } ?? false }
        }

        /// Whether the command waits to be recorded.
        func holds(_ sequence: UInt64) -> Bool { items.contains { $0.request.command.sequence == sequence } }

        var isOverdue: Bool {
            guard let since else { return false }
            return ContinuousClock.now - since >= SyncEngine.acknowledgementDelay
        }
    }

    /// Sends the window as one batch request (PROTOCOL.md, "Batches"), then records the outcomes
    /// in order: the first that was not applied at once, with the applied ones before it; when all
    /// were applied, they are recorded while the next window's request is out (``record(_:during:)``),
    /// or when the pass ends.
    func sendBatch(_ commands: [OutboxCommand], _ pass: inout Pass) async throws -> Step {
        // One command per entity in a batch: the server takes each request as if sent alone
        // (PROTOCOL.md, "Batches"), so a second command of an entity must be made on the version
        // the answer to the first gives. The batch ends before it; the next one waits for that
        // answer to be recorded. (Made on the version before, it met the app's own first change
        // as a conflict, which `serverWins` settled by dropping the second change.)
        let window = Self.onePerEntity(commands)
        // A window with a command of an entity whose earlier command waits to be recorded reads
        // the version that acknowledgement stores: recorded first.
        if pass.applied.concernsAny(window) { try await record(&pass) }
        // From here the commands may reach the server: coalescing must leave them alone. Only
        // those still pending go (another transaction may have coalesced one away since the
        // queue was read); the queue is read again for the rest.
        let commands = try await store.prepareToSend(window)
        guard !commands.isEmpty else { return .next }
        var requests: [PushRequest] = []
        for command in commands { requests.append(try await request(for: command)) }
        status.inFlight = commands[0].sequence
        // While the server works on this window, the previous window's answers are recorded and
        // the next one's files are read (the store is idle otherwise).
        async let answered = push(batch: requests)
        try await record(&pass, during: commands[0].sequence)
        await store.readAhead(limit: commands.count * 2)
        var outcomes = await answered
        status.inFlight = nil
        if outcomes.isEmpty { outcomes = [.retryLater(reason: "the server handled no command of the batch", status: nil, after: nil)] }
        for (request, outcome) in zip(requests, outcomes) {
            if case .applied(let version, let entity) = outcome {
                pass.applied.append(try await appliedPush(request, version: version, entity: entity))
                continue
            }
            try await record(&pass)
            let step = try await handle(outcome, of: request, round: 1, pass: &pass)
            guard case .next = step else { return step }
        }
        try checkNotStopped()
        return .next
    }

    /// Sends the window one request per command, each after the previous answer.
    func sendOneByOne(_ commands: [OutboxCommand], _ pass: inout Pass) async throws -> Step {
        // From here the commands may reach the server: coalescing must leave them alone. One
        // durable mark covers the window (it may cover commands a failure leaves unsent: the safe
        // side, they are only kept from coalescing). Only those still pending go (another
        // transaction may have coalesced one away since the queue was read).
        let commands = try await store.prepareToSend(commands)
        // While the server answers this window's requests, the next window's files are read.
        async let readAhead: Void = store.readAhead(limit: commands.count + Self.oneByOneWindow)
        for command in commands {
            try checkNotStopped()
            if pass.applied.isOverdue || pass.applied.concerns(command) { try await record(&pass) }
            let request = try await request(for: command)
            status.inFlight = command.sequence
            emit(.sending(command.sequence))
            let outcome = await push(request)
            status.inFlight = nil
            if case .applied(let version, let entity) = outcome {
                pass.applied.append(try await appliedPush(request, version: version, entity: entity))
                continue
            }
            try await record(&pass)
            // A conflict settled or a dead letter may change what the rest of the window was read
            // from (the entity, its version): the queue is read again.
            return try await handle(outcome, of: request, round: 1, pass: &pass)
        }
        await readAhead
        try await record(&pass)
        return .next
    }

    /// The server's entity in an answer, as JSON. When it is byte for byte the command's own body
    /// as sent (the usual answer to a push), it is the command's entity, parsed already when the
    /// queue was read: not parsed again.
    static func serverEntity(of item: AppliedPushes.Item) -> JSONValue? {
        let command = item.request.command
        if let entity = item.entity, entity == item.request.body, entity == command.body, command.operation == .upsert,
            let parsed = command.json["entity"]
        {
            return parsed
        }
        return json(item.entity)
    }

    /// The leading commands of `commands` up to the second command of one entity (at least one).
    static func onePerEntity(_ commands: [OutboxCommand]) -> [OutboxCommand] {
        var entities: Set<String> = []
        let end = commands.firstIndex { command in
            command.entityID.map { !entities.insert((command.collection ?? "") + "/" + $0).inserted } ?? false
        }
        return Array(commands.prefix(max(end ?? commands.count, 1)))
    }

    /// Records the previous window's answers while a window's request is out (its first command
    /// `sending`), then says that window is being sent: the app hears of each command sent before
    /// it hears of the next window.
    private func record(_ pass: inout Pass, during sending: UInt64) async throws {
        try await record(&pass)
        emit(.sending(sending))
    }

    /// Acknowledges the applied commands in one transaction, then reports each as sent.
    func record(_ pass: inout Pass) async throws {
        guard !pass.applied.isEmpty else { return }
        let items = pass.applied.items
        let acknowledgements = items.map { item in
            Store.Acknowledgement(
                sequence: item.request.command.sequence, version: item.version,
                serverEntity: Self.serverEntity(of: item),
                collection: item.request.command.collection.flatMap { configuration.collections[$0] },
                advancingVersion: item.advancingVersion, serverEntityBytes: item.entity)
        }
        // Relaxed: everything here can be had from the server again (see `Store.syncWrite`).
        _ = try await store.acknowledge(acknowledgements, durability: .relaxed)
        pass.applied = AppliedPushes()
        markReachable()
        status.lastSuccess = Date()
        status.lastError = nil
        for item in items {
            let command = item.request.command
            pass.report.sent += 1
            pass.report.remaining = max(0, pass.report.remaining - 1)
            if let collection = command.collection, let partition = command.partition {
                pass.changedPartitions[collection, default: []].insert(partition)
            }
            emit(.sent(command.sequence, version: item.version))
        }
    }
}
