import Folio
import Foundation

/// The server's data: a Folio store holding the TyTE collections as clients see them, plus the
/// server's bookkeeping (versions and feed, the idempotency memory, the change counter).
///
/// Every operation is one `store.write` transaction, so it sees a consistent state and, for a
/// push, commits the change with everything that goes with it or nothing at all. Reads use a
/// transaction too (one that stages nothing writes nothing), so a pull never sees half a push.
final class SyncDatabase: Sendable {
    let store: Store
    /// The most changes one `?since=` page holds.
    let pageSize: Int
    /// How many days remembered responses are kept, at least.
    let rememberDays: Int

    init(store: Store, pageSize: Int, rememberDays: Int) {
        self.store = store
        self.pageSize = max(1, pageSize)
        self.rememberDays = max(1, rememberDays)
    }

    // MARK: Pushes

    /// Applies pushes in order in one transaction, stopping after the first that does not
    /// succeed (a `DELETE` answered 404 or 410 succeeded: it was already gone); an item that could not be parsed answers with its error and stops the run.
    /// - Returns: One response per push processed.
    /// - Throws: A ``FolioError`` when the store fails; then nothing was applied.
    func apply(_ pushes: [Result<Push, RequestError>], now: Date = Date()) async throws -> [APIResponse] {
        try await store.write { transaction in
            let applier = PushApplier(transaction, now: now)
            var responses: [APIResponse] = []
            for item in pushes {
                let response: APIResponse
                switch item {
                case .success(let push): response = try applier.apply(push)
                case .failure(let error): response = error.response
                }
                responses.append(response)
                // A DELETE of something already gone is applied (PROTOCOL.md): the run goes on.
                var gone = false
                if case .success(let push) = item { gone = push.method == "DELETE" && (response.status == 404 || response.status == 410) }
                if !response.isSuccess && !gone { break }
            }
            try applier.finish()
            return responses
        }
    }

    // MARK: Reads

    /// `GET {collection}/{id}`: the entity and its version, or `404 null`.
    func entity(_ kind: CollectionKind, id: String) async throws -> APIResponse {
        try await store.write { transaction in
            switch kind {
            case .todos: try Self.entity(TodoDocument.self, id: id, in: transaction)
            case .tags: try Self.entity(TagDocument.self, id: id, in: transaction)
            case .dailyStats: try Self.entity(DailyStatDocument.self, id: id, in: transaction)
            }
        }
    }

    private static func entity<D: ServerDocument>(_ type: D.Type, id: String, in transaction: Transaction) throws -> APIResponse {
        guard let document = try transaction.get(D.self, id: id) else { return .json(404, .null) }
        let version = try transaction.get(D.Version.self, id: id).map(\.sequence) ?? 0
        return .json(200, document.json, version: version)
    }

    /// `GET {collection}?partition=KEY`: every entity of the partition with its version, by id.
    func partition(_ kind: CollectionKind, key: String) async throws -> APIResponse {
        try await store.write { transaction in
            switch kind {
            case .todos: try Self.partition(TodoDocument.self, .day(key), in: transaction)
            case .tags: try Self.partition(TagDocument.self, .all, in: transaction)
            case .dailyStats: try Self.partition(DailyStatDocument.self, .month(key), in: transaction)
            }
        }
    }

    private static func partition<D: ServerDocument>(_ type: D.Type, _ selection: PartitionSelection, in transaction: Transaction) throws -> APIResponse {
        let documents = try transaction.fetch(Query<D>(selection)).sorted { $0.id < $1.id }
        var versions: [String: Int64] = [:]
        for record in try transaction.fetch(Query<D.Version>(selection)) where !record.deleted { versions[record.id] = record.sequence }
        let entities: [JSONValue] = documents.map { document in
            .object(["id": .string(document.id), "version": .string(String(versions[document.id] ?? 0)), "entity": document.json])
        }
        return .json(200, .object(["entities": .array(entities)]))
    }

    /// `GET {collection}?since=CURSOR`: the entities changed after the cursor, oldest change
    /// first, each once with its current state (or as deleted), at most ``pageSize``.
    func changes(_ kind: CollectionKind, after cursor: Int64) async throws -> APIResponse {
        let pageSize = pageSize
        return try await store.write { transaction in
            switch kind {
            case .todos: try Self.changes(TodoDocument.self, after: cursor, pageSize: pageSize, in: transaction)
            case .tags: try Self.changes(TagDocument.self, after: cursor, pageSize: pageSize, in: transaction)
            case .dailyStats: try Self.changes(DailyStatDocument.self, after: cursor, pageSize: pageSize, in: transaction)
            }
        }
    }

    private static func changes<D: ServerDocument>(_ type: D.Type, after cursor: Int64, pageSize: Int,
                                                   in transaction: Transaction) throws -> APIResponse {
        let later = try transaction.fetch(Query<D.Version>(.all)).filter { $0.sequence > cursor }.sorted { $0.sequence < $1.sequence }
        let page = later.prefix(pageSize)
        var changes: [JSONValue] = []
        for record in page {
            if !record.deleted, let document = try transaction.get(D.self, id: record.id) {
                changes.append(.object(["id": .string(record.id), "version": .string(String(record.sequence)), "entity": document.json]))
            } else {
                changes.append(.object(["id": .string(record.id), "deleted": .bool(true)]))
            }
        }
        let hasMore = later.count > page.count
        let latest = try transaction.get(ChangeCounter.self, id: ChangeCounter.entityID)?.value ?? 0
        let next = hasMore ? (page.last?.sequence ?? cursor) : max(cursor, latest)
        return .json(200, .object(["changes": .array(changes), "cursor": .string(String(next)), "hasMore": .bool(hasMore)]))
    }

    // MARK: Upkeep

    /// Forgets the remembered responses stored more than ``rememberDays`` days before `now`
    /// (whole UTC days: a key is remembered at least that long, at most a day longer).
    /// - Returns: How many were forgotten.
    @discardableResult
    func expireIdempotencyRecords(now: Date = Date()) async throws -> Int {
        let lastExpiredDay = Day.utc(now.addingTimeInterval(-Double(rememberDays + 1) * 86_400))
        return try await store.write { transaction in
            try transaction.deleteAll(Query<IdempotencyRecord>(.days(from: "0001-01-01", through: lastExpiredDay)))
        }
    }
}
