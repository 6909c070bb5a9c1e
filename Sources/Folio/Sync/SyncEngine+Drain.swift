internal import Foundation

/// Draining: the head of the queue goes out, its outcome is recorded, then the next.
extension SyncEngine {
    /// What to do after one command's outcome.
    enum Step {
        case next
        case wait(until: Date)
    }

    /// Where a drain pass stands: what it did, and what it must still record.
    struct Pass {
        var report = DrainReport()
        /// Per collection, the partitions this pass changed (server state stored, conflicts
        /// merged): the derived collections that refresh from them are recomputed there.
        var changedPartitions: [String: Set<String>] = [:]
        /// The commands the server applied and the pass has not recorded yet (see `record`).
        var applied = AppliedPushes()
    }

    /// Sends commands in order until the queue is empty, blocked by a quarantined file, or a
    /// failure means waiting. Runs alone (see `exclusive`).
    ///
    /// The queue is read a window at a time (a batch, or up to ``SyncEngine/oneByOneWindow``
    /// commands sent one request each, every request leaving after the previous answer), and the
    /// commands the server applied are acknowledged together, in one transaction, when the window
    /// ends or before anything that depends on them (see `AppliedPushes`).
    func drainPass() async throws -> DrainReport {
        var pass = Pass()
        var honourBackoff = true
        let networkCameBack = ignoreBackoffOnce
        ignoreBackoffOnce = false
        let batchSize = (transport as? any BatchTransport)?.maxBatchSize ?? 1
        defer { status.inFlight = nil }
        do {
            while true {
                try checkNotStopped()
                // The commands answered and not recorded yet (a batch's, recorded while the next
                // one is out) are still pending: the window is read past them.
                let unrecorded = pass.applied
                let head = try await store.queueHead(limit: (batchSize > 1 ? batchSize : Self.oneByOneWindow) + unrecorded.count)
                let commands = unrecorded.isEmpty ? head.commands : head.commands.filter { !unrecorded.holds($0.sequence) }
                status.pendingCount = head.pendingCount
                pass.report.remaining = head.pendingCount
                if !head.quarantined.isEmpty || commands.isEmpty { try await record(&pass) }
                if let blocked = head.quarantined.first {
                    let reason = "the queue waits for an unreadable command file: \(blocked)"
                    if status.blockedReason != reason { emit(.blocked(reason: reason)) }
                    status.blockedReason = reason
                    pass.report.stoppedBecause = reason
                    break
                }
                status.blockedReason = nil
                guard let first = commands.first else {
                    status.nextAttempt = nil
                    emit(.idle)
                    break
                }
                // Only the pass's first head can be waiting out a backoff: a command is tried only
                // once every earlier one is settled, and a failure ends the pass.
                if honourBackoff {
                    let attempts = try await store.attempts(for: first.sequence)
                    // The network coming back ends a wait caused by the network, not one the server asked for.
                    if let next = attempts.nextAttempt, next > Date(), !(networkCameBack && !attempts.serverAnsweredLast) {
                        status.nextAttempt = next
                        pass.report.nextAttempt = next
                        pass.report.stoppedBecause =
                            "command \(first.sequence) waits until \(next.formatted(.iso8601)) to be sent again"
                            + (attempts.lastError.map { " (after \(attempts.count) failed attempt\(attempts.count == 1 ? "" : "s"); the last: \($0))" } ?? "")
                        break
                    }
                    honourBackoff = false
                }
                let step = batchSize > 1 ? try await sendBatch(commands, &pass) : try await sendOneByOne(commands, &pass)
                if case .wait(let until) = step {
                    pass.report.nextAttempt = until
                    pass.report.stoppedBecause = status.lastError
                    break
                }
            }
            try await record(&pass)
        } catch {
            // What the server applied is recorded even when the pass ends on an error or a
            // stop; if this fails too, those commands are sent again under the same keys.
            if !pass.applied.isEmpty {
                do { try await record(&pass) } catch let recording {
                    await store.report(.warning, "could not record \(pass.applied.count) acknowledgements (sent again later): \(recording)")
                }
            }
            throw error
        }
        for (derived, source) in configuration.refreshes {
            guard let partitions = pass.changedPartitions[source], let collection = configuration.collections[derived] else { continue }
            let keys = Set(partitions.compactMap { Self.partition(of: $0, in: collection.granularity) })
            for key in keys.sorted() {
                try checkNotStopped()
                do {
                    _ = try await pullPartition(collection, key: key)
                } catch {
                    status.lastError = "refreshing \(derived) \(key): \(error)"
                    await store.report(.warning, "could not refresh \(derived) \(key) after a push: \(error)")
                }
            }
        }
        return pass.report
    }

    /// The partition of a derived collection that contains a source partition.
    static func partition(of source: String, in granularity: PartitionGranularity) -> String? {
        switch granularity {
        case .none: return ""
        case .month: return source.count >= 7 ? String(source.prefix(7)) : nil
        case .day: return source.count == 10 ? source : nil
        }
    }

    /// Sends requests as one batch (a single one alone).
    func push(batch requests: [PushRequest]) async -> [PushOutcome] {
        guard requests.count > 1, let batching = transport as? any BatchTransport else { return [await push(requests[0])] }
        do {
            return Array(try await batching.push(batch: requests).prefix(requests.count))
        } catch {
            return [.retryLater(reason: "the transport failed: \(error)", status: nil, after: nil)]
        }
    }

    /// Sends one request.
    func push(_ request: PushRequest) async -> PushOutcome {
        do {
            return try await transport.push(request)
        } catch {
            return .retryLater(reason: "the transport failed: \(error)", status: nil, after: nil)
        }
    }

    /// The request for a command as the queue holds it.
    func request(for command: OutboxCommand) async throws -> PushRequest {
        PushRequest(command: command, body: command.body, precondition: try await precondition(for: command), idempotencyKey: command.id)
    }

    private func precondition(for command: OutboxCommand) async throws -> PushRequest.Precondition {
        guard let collection = command.collection, let id = command.entityID,
            command.operation == .upsert || command.operation == .delete
        else { return .none }
        // The change created the entity here (new, or again after a delete): a create, whatever
        // version an earlier incarnation had.
        if command.operation == .upsert && command.base == nil { return .absent }
        // What the server has now, as far as this store durably knows: the version the entity's
        // previous acknowledgement or a pull stored (with the entity, or as a tombstone version).
        var version: String?
        if let granularity = await granularity(of: collection, partition: command.partition) {
            version = try await store.storedVersion(
                collection: collection, granularity: granularity, id: id, command: command.sequence,
                deletedFrom: command.operation == .delete ? command.partition : nil)
        }
        switch version ?? command.baseVersion {
        case nil: return .absent
        case ""?: return .none
        case let version?: return .version(version)
        }
    }

    func granularity(of collection: String, partition: String?) async -> PartitionGranularity? {
        if let known = configuration.collections[collection] { return known.granularity }
        return await store.granularity(of: collection, partition: partition)
    }

    /// Records one outcome; says whether the pass goes on.
    func handle(_ outcome: PushOutcome, of request: PushRequest, round: Int, pass: inout Pass) async throws -> Step {
        let command = request.command
        switch outcome {
        case .applied(let version, let entity):
            // Nothing else waits to be recorded: whatever came before was recorded first.
            pass.applied.append(try await appliedPush(request, version: version, entity: entity))
            try await record(&pass)
            return .next
        case .conflict(let version, let entity):
            markReachable()
            pass.report.conflicts += 1
            return try await settleConflict(request, serverVersion: version, serverEntity: entity, round: round, pass: &pass)
        case .retryLater(let reason, let httpStatus, let after):
            markReachable()
            return try await recordFailure(
                command, reason: reason, httpStatus: httpStatus, serverAnswered: true,
                retryAfter: after, report: &pass.report)
        case .unreachable(let reason):
            if status.isOnline {
                status.isOnline = false
                emit(.offline(reason: reason))
            }
            return try await recordFailure(
                command, reason: reason, httpStatus: nil, serverAnswered: false,
                retryAfter: nil, report: &pass.report)
        case .unauthorized(let reason):
            markReachable()
            return try await recordFailure(
                command, reason: reason, httpStatus: 401, serverAnswered: false,
                retryAfter: nil, report: &pass.report)
        case .rejected(let reason):
            markReachable()
            try await deadLetter(command, reason: reason, report: &pass.report)
            return .next
        }
    }

    func markReachable() {
        if !status.isOnline {
            status.isOnline = true
            emit(.online)
        }
    }

    /// Counts a failed attempt and says when to try again; past the limit of answered failures,
    /// the command is dead-lettered and the pass goes on.
    private func recordFailure(
        _ command: OutboxCommand, reason: String, httpStatus: Int?, serverAnswered: Bool,
        retryAfter: Duration?, report: inout DrainReport
    ) async throws -> Step {
        let previous = try await store.attempts(for: command.sequence)
        if serverAnswered && previous.serverErrors + 1 >= configuration.maxAttempts {
            let why = "gave up on command \(command.sequence) after \(previous.serverErrors + 1) failed attempts; the last: \(reason)"
            try await deadLetter(command, reason: FailureReason(why, status: httpStatus), report: &report)
            return .next
        }
        let delay = Backoff(initial: configuration.initialBackoff, maximum: configuration.maxBackoff, maxRetryAfter: configuration.maxRetryAfter)
            .delay(attempt: previous.count + 1, retryAfter: retryAfter, using: &generator)
        let next = Date().addingTimeInterval(Double(delay.components.seconds) + Double(delay.components.attoseconds) * 1e-18)
        try await store.recordFailedAttempt(command.sequence, error: reason, nextAttempt: next, serverAnswered: serverAnswered)
        status.lastError = "command \(command.sequence): \(reason)"
        status.nextAttempt = next
        emit(.retrying(command.sequence, reason: reason, nextAttempt: next))
        return .wait(until: next)
    }

    func deadLetter(_ command: OutboxCommand, reason: FailureReason, report: inout DrainReport) async throws {
        try await store.failCommand(command.sequence, reason: reason)
        report.deadLettered += 1
        report.remaining = max(0, report.remaining - 1)
        status.lastError = "command \(command.sequence) moved to outbox/failed/: \(reason.reason)"
        emit(.deadLettered(command.sequence, reason: reason.reason))
    }

    /// The server applied `request`: to be acknowledged with its window.
    ///
    /// A merged resend put on the server what none of this entity's later commands was made on:
    /// they keep the version before it, so they meet the merge and are merged in turn (a later
    /// command sent over it as it is would undo the other side's fields).
    func appliedPush(_ request: PushRequest, version: String?, entity: Data?) async throws -> AppliedPushes.Item {
        AppliedPushes.Item(
            request: request, version: version, entity: entity,
            advancingVersion: try await advancesVersion(request.command, sent: request.body))
    }

    /// Whether acknowledging `command`, sent with `body`, gives its entity the server's new
    /// version: not when `body` is a merge and later commands of the entity wait (they were made
    /// without the server's side of the merge, so they must meet it and be merged in turn).
    func advancesVersion(_ command: OutboxCommand, sent body: Data?) async throws -> Bool {
        guard body != command.body, command.operation == .upsert, let name = command.collection, let id = command.entityID else {
            return true
        }
        return !(try await store.hasLaterPendingCommand(after: command.sequence, collection: name, id: id))
    }

    /// The server has what the command sent, though it did not say so in an answer to it: the
    /// command leaves the queue, and the entity takes the server's version, in one transaction.
    func acknowledge(_ command: OutboxCommand, version: String?, advancingVersion: Bool = true) async throws {
        let acknowledgement = Store.Acknowledgement(
            sequence: command.sequence, version: version,
            collection: command.collection.flatMap { configuration.collections[$0] }, advancingVersion: advancingVersion)
        // Relaxed: everything here can be had from the server again (see `Store.syncWrite`).
        _ = try await store.acknowledge([acknowledgement], durability: .relaxed)
    }
}
