internal import Foundation

/// Settling a conflict (409/412, or 404 on a PUT): by the collection's policy, PROTOCOL.md
/// "Conflict policies".
extension SyncEngine {
    func settleConflict(
        _ request: PushRequest, serverVersion: String?, serverEntity: Data?, round: Int, pass: inout Pass
    ) async throws -> Step {
        let command = request.command
        guard let name = command.collection, let id = command.entityID,
            command.operation == .upsert || command.operation == .delete
        else {
            // A custom command has no version to conflict on: the server refuses it.
            try await deadLetter(command, reason: FailureReason("the server reported a conflict for a custom command"), report: &pass.report)
            return .next
        }
        guard round <= configuration.maxConflictRounds else {
            return try await handle(
                .retryLater(reason: "the server reported \(round - 1) conflicts in a row", status: 409, after: nil),
                of: request, round: round, pass: &pass)
        }
        let collection = configuration.collections[name]
        let base = Self.json(command.base)
        let local = command.operation == .upsert ? Self.json(command.body) : nil
        let server = Self.json(serverEntity)
        let decision = decide(
            collection?.policy ?? .threeWayMerge,
            SyncedCollection.ErasedConflict(base: base, local: local, server: server, serverVersion: serverVersion, id: id))
        if case .useServer = decision.resolution, server == nil, local != nil,
            try await store.hasLaterPendingCommand(after: command.sequence, collection: name, id: id)
        {
            // This change made nothing the server must keep; a later change of the entity meets
            // the deletion in turn, and recreates it if it changed something.
            try await store.dropCommand(command.sequence)
            pass.report.remaining = max(0, pass.report.remaining - 1)
            emit(.conflict(command.sequence, resolution: decision.label))
            return .next
        }
        switch decision.resolution {
        case .useServer where collection != nil || server == nil:
            try await takeServer(command, name: name, id: id, collection: collection, version: serverVersion, entity: server)
            pass.report.remaining = max(0, pass.report.remaining - 1)
            emit(.conflict(command.sequence, resolution: "server"))
            return .next
        case .useServer, .keepBoth:
            var reason = FailureReason(decision.note ?? "the server has another version of \(name)/\(id); the app decides", status: 409)
            reason.extra["serverVersion"] = serverVersion.map(JSONValue.string) ?? .null
            reason.extra["serverEntity"] = server ?? .null
            try await deadLetter(command, reason: reason, report: &pass.report)
            emit(.conflict(command.sequence, resolution: "kept both"))
            return .next
        case .delete where server == nil:
            // Both sides deleted it.
            try await acknowledge(command, version: nil)
            pass.report.sent += 1
            emit(.conflict(command.sequence, resolution: decision.label))
            return .next
        case .send(let entity) where entity == server:
            // The server already holds exactly what would be sent (an earlier resend whose answer
            // was lost): applied.
            try await acknowledge(
                command, version: serverVersion,
                advancingVersion: try await advancesVersion(command, sent: Data(JSONWriter.compact(entity))))
            pass.report.sent += 1
            pass.report.remaining = max(0, pass.report.remaining - 1)
            emit(.conflict(command.sequence, resolution: decision.label))
            emit(.sent(command.sequence, version: serverVersion))
            return .next
        case .send(let entity) where entity != local:
            try await storeMerged(command, collection: collection, entity: entity)
            fallthrough
        case .send, .delete:
            let body: Data?
            if case .send(let entity) = decision.resolution { body = Data(JSONWriter.compact(entity)) } else { body = nil }
            // The same resolution of the same conflict is the same request: a deterministic key.
            // A merge may move the entity (another client changed its date): file it where it is now.
            var partition = command.partition
            if case .send(let entity) = decision.resolution, let collection {
                partition = try collection.admit(entity, id, coder).text
            }
            let resend = PushRequest(
                command: Self.resending(command, asDelete: body == nil, partition: partition), body: body,
                precondition: server == nil ? .absent : serverVersion.map { .version($0) } ?? .none,
                idempotencyKey: command.id + "@" + (serverVersion ?? "deleted"))
            emit(.conflict(command.sequence, resolution: decision.label))
            status.inFlight = command.sequence
            let outcome = await push(resend)
            status.inFlight = nil
            try checkNotStopped()
            return try await handle(outcome, of: resend, round: round + 1, pass: &pass)
        }
    }

    /// A policy's decision, with a label for events and a note for the reason file.
    private func decide(_ policy: SyncedCollection.ErasedPolicy, _ conflict: SyncedCollection.ErasedConflict)
        -> (resolution: SyncedCollection.ErasedResolution, label: String, note: String?)
    {
        switch policy {
        case .serverWins: return (.useServer, "server", nil)
        case .clientWins: return (conflict.local.map { .send($0) } ?? .delete, "client", nil)
        case .keepBoth: return (.keepBoth, "kept both", nil)
        case .threeWayMerge:
            guard let local = conflict.local else {
                // A local delete: it stands unless the server edited the entity meanwhile.
                if conflict.server == nil || conflict.server == conflict.base { return (.delete, "merged", nil) }
                return (.useServer, "merged", nil)
            }
            guard let server = conflict.server else {
                // A local edit over a server-side delete recreates the entity, if it changed
                // something: a change that leaves the entity as it was (moved away and back) does not.
                if let base = conflict.base, local == base { return (.useServer, "merged", nil) }
                return (.send(local), "merged", nil)
            }
            return (.send(ThreeWayMerge.merge(base: conflict.base, local: local, server: server)), "merged", nil)
        case .custom(let resolve):
            do {
                return (try resolve(conflict, coder), "custom", nil)
            } catch {
                return (.keepBoth, "kept both", "the conflict resolver failed: \(error)")
            }
        }
    }

    /// The command a resolution sends: the same, or turned into a delete (a custom resolver may
    /// decide to delete).
    private static func resending(_ command: OutboxCommand, asDelete: Bool, partition: String?) -> OutboxCommand {
        let deletes = asDelete && command.operation == .upsert
        let moves = partition != command.partition
        guard deletes || moves, case .object(var members) = command.json else { return command }
        if deletes {
            members["operation"] = .string("delete")
            members["entity"] = nil
        }
        if moves { members["partition"] = partition.map(JSONValue.string) }
        // Built from a command that was read and checked: it reads back, or the original goes.
        do { return try OutboxCommand(json: .object(members), path: "") } catch { return command }
    }

    static func json(_ data: Data?) -> JSONValue? {
        guard let data else { return nil }
        do {
            let value = try JSONParser.parse([UInt8](data))
            return value == .null ? nil : value
        } catch {
            return nil
        }
    }

    /// Server wins: the server's entity (or deletion) replaces the local one; this command and
    /// the later pending commands of the entity leave the queue; one transaction.
    private func takeServer(
        _ command: OutboxCommand, name: String, id: String, collection: SyncedCollection?, version: String?, entity: JSONValue?
    ) async throws {
        let granularity = await granularity(of: name, partition: command.partition)
        try await store.syncWrite { tx, outbox in
            guard let granularity else { return }
            try collection?.register(tx)
            for (sequence, later) in try outbox.pending(collection: name, id: id) where sequence >= command.sequence {
                let operation = later["operation"]?.stringValue
                if operation == "upsert" || operation == "delete" {
                    tx.outboxChanges.append(.remove(sequence: sequence, archive: false))
                }
            }
            var target: PartitionAddress?
            if let entity, let collection { target = try collection.address(of: entity, id: id, coder: tx.coder) }
            try tx.stageServerValue(entity, at: target, collection: name, granularity: granularity, id: id, version: version ?? "")
        }
    }

    /// Stores a merged entity locally (unless later local changes of the entity are pending: they
    /// meet their own conflict in turn), keeping its version until the server acknowledges it.
    private func storeMerged(_ command: OutboxCommand, collection: SyncedCollection?, entity: JSONValue) async throws {
        guard let collection, let name = command.collection, let id = command.entityID else { return }
        try await store.syncWrite { tx, outbox in
            try collection.register(tx)
            if try outbox.pending(collection: name, id: id).contains(where: { $0.sequence > command.sequence }) { return }
            try tx.stageServerEntity(entity, id: id, of: collection, version: nil)
        }
    }
}

/// Which side a conflict kept for the app (``ConflictPolicy/keepBoth``) ends with.
public enum ConflictSide: Sendable {
    /// The server's entity (or deletion) replaces the local change, which is dropped.
    case server
    /// The local change is sent again over the server's version, and wins.
    case local
}

extension SyncEngine {
    /// Settles a conflict that ``ConflictPolicy/keepBoth`` (or a failing custom resolver) left in
    /// `outbox/failed/`.
    /// - Parameters:
    ///   - sequence: The failed command's number.
    ///   - side: Which side wins.
    /// - Throws: ``FolioError`` with ``FolioError/Code/invalidQuery`` if no failed command has
    ///   this number or it is not a conflict.
    public func resolveFailedConflict(_ sequence: UInt64, keeping side: ConflictSide) async throws {
        try await exclusive {
            guard let failed = try await store.failedCommands().first(where: { $0.id == sequence }),
                let name = failed.command.collection, let id = failed.command.entityID,
                failed.command.operation == .upsert || failed.command.operation == .delete,
                failed.serverVersion != nil || failed.serverEntity != nil
            else {
                throw FolioError(.invalidQuery, "there is no failed conflict with number \(sequence)")
            }
            let collection = configuration.collections[name]
            guard let granularity = await granularity(of: name, partition: failed.command.partition) else {
                throw FolioError(.invalidQuery, "register \(name) with the sync configuration to settle its conflicts")
            }
            let server = Self.json(failed.serverEntity)
            let version = failed.serverVersion
            try await store.syncWrite { tx, outbox in
                try collection?.register(tx)
                switch side {
                case .server:
                    tx.outboxChanges.append(.remove(sequence: sequence, archive: false))
                    var target: PartitionAddress?
                    if let server {
                        guard let collection else {
                            throw FolioError(.invalidQuery, "register \(name) with the sync configuration to take the server's entity")
                        }
                        target = try collection.address(of: server, id: id, coder: tx.coder)
                    }
                    try tx.stageServerValue(server, at: target, collection: name, granularity: granularity, id: id, version: version ?? "")
                case .local:
                    tx.outboxChanges.append(.retry(sequence: sequence))
                    // The command goes again over the server's version: kept where it looks.
                    let live = try tx.address(of: id, collection: name, granularity: granularity)
                    if let version,
                        let address = try outbox.serverVersionAddress(
                            collection: name, granularity: granularity, id: id, command: sequence,
                            deletedFrom: failed.command.operation == .delete ? failed.command.partition : nil, locate: { live })
                    {
                        tx.stageServerVersion(version, at: address, id: id)
                    }
                }
            }
        }
        wake()
    }
}
