import Folio
import Foundation

/// One owner's data in a Folio store: the TyTE collections as clients see them, plus the
/// server's bookkeeping (versions and feed, the idempotency memory, the last position).
///
/// Every operation is one `store.write` transaction, so it sees a consistent state and, for a
/// push, commits the change with everything that goes with it or nothing at all. Reads use a
/// transaction too (one that stages nothing writes nothing), so a pull never sees half a push.
/// Folio serializes transactions, so positions follow commit order and the feed has no gaps.
final class FolderDatabase: Sendable {
    let store: Store

    init(store: Store) {
        self.store = store
    }

    /// Applies pushes in order in one transaction (see ``PushApplier/applyAll(_:)``).
    /// - Throws: A ``FolioError`` when the store fails; then nothing was applied.
    func apply(_ pushes: [Result<Push, RequestError>], now: Date) async throws -> [APIResponse] {
        try await store.write { transaction in
            try PushApplier(FolderPushStore(transaction), now: now).applyAll(pushes)
        }
    }

    /// `GET {collection}/{id}`.
    func entity(_ kind: CollectionKind, id: String) async throws -> APIResponse {
        try await store.write { transaction in
            ReadAnswers.entity(try FolderPushStore(transaction).entity(kind, id: id))
        }
    }

    /// `GET {collection}?partition=KEY`.
    func partition(_ kind: CollectionKind, key: String) async throws -> APIResponse {
        try await store.write { transaction in
            switch kind {
            case .todos: ReadAnswers.partition(try Self.partition(TodoDocument.self, .day(key), in: transaction))
            case .tags: ReadAnswers.partition(try Self.partition(TagDocument.self, .all, in: transaction))
            case .dailyStats: ReadAnswers.partition(try Self.partition(DailyStatDocument.self, .month(key), in: transaction))
            }
        }
    }

    private static func partition<D: ServerDocument>(
        _ type: D.Type, _ selection: PartitionSelection,
        in transaction: Transaction
    ) throws -> [String: StoredEntity] {
        var versions: [String: Int64] = [:]
        for record in try transaction.fetch(Query<D.Version>(selection)) where !record.deleted { versions[record.id] = record.sequence }
        var entities: [String: StoredEntity] = [:]
        for document in try transaction.fetch(Query<D>(selection)) {
            entities[document.id] = StoredEntity(fields: document.fields, version: versions[document.id] ?? 0, partitionKey: document.partitionKey)
        }
        return entities
    }

    /// `GET {collection}?since=CURSOR`, at most `pageSize` changes.
    func changes(_ kind: CollectionKind, after cursor: Int64, pageSize: Int) async throws -> APIResponse {
        try await store.write { transaction in
            switch kind {
            case .todos: try Self.changes(TodoDocument.self, after: cursor, pageSize: pageSize, in: transaction)
            case .tags: try Self.changes(TagDocument.self, after: cursor, pageSize: pageSize, in: transaction)
            case .dailyStats: try Self.changes(DailyStatDocument.self, after: cursor, pageSize: pageSize, in: transaction)
            }
        }
    }

    private static func changes<D: ServerDocument>(
        _ type: D.Type, after cursor: Int64, pageSize: Int,
        in transaction: Transaction
    ) throws -> APIResponse {
        let later = try transaction.fetch(Query<D.Version>(.all)).filter { $0.sequence > cursor }.sorted { $0.sequence < $1.sequence }
        var page: [(id: String, entity: StoredEntity)] = []
        for record in later.prefix(pageSize) {
            let document = record.deleted ? nil : try transaction.get(D.self, id: record.id)
            page.append((record.id, StoredEntity(fields: document?.fields, version: record.sequence, partitionKey: record.partitionKey)))
        }
        let latest = try FolderPushStore(transaction).lastPosition()
        return ReadAnswers.changes(page, hasMore: later.count > page.count, after: cursor, latest: latest)
    }

    /// Forgets the remembered responses of the UTC days up to `lastExpiredDay`, a whole day file
    /// at a time.
    /// - Returns: How many were forgotten.
    func forgetIdempotencyRecords(through lastExpiredDay: String) async throws -> Int {
        try await store.write { transaction in
            try transaction.deleteAll(Query<IdempotencyRecord>(.days(from: "0001-01-01", through: lastExpiredDay)))
        }
    }
}
