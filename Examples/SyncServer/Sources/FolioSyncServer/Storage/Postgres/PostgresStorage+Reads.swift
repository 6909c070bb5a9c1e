import Foundation
import Logging
import PostgresNIO

/// Pulls: an entity, a partition, the feed (the owner's last position first, then changes up to it).
extension PostgresStorage {
    func entity(_ kind: CollectionKind, id: String, for owner: Owner) async throws -> APIResponse {
        let query: PostgresQuery =
            fault == .noOwnerFilter
            ? "SELECT id, version, partition_key, body FROM folio_entities WHERE collection = \(kind.rawValue) AND id = \(id)"
            : """
            SELECT id, version, partition_key, body FROM folio_entities
            WHERE owner = \(owner.name) AND collection = \(kind.rawValue) AND id = \(id)
            """
        let found = try await client.withConnection { connection in try await self.entities(on: connection, query) }
        return ReadAnswers.entity(found[id])
    }

    func partition(_ kind: CollectionKind, key: String, for owner: Owner) async throws -> APIResponse {
        let query: PostgresQuery =
            fault == .noOwnerFilter
            ? """
            SELECT id, version, partition_key, body FROM folio_entities
            WHERE collection = \(kind.rawValue) AND partition_key = \(key) AND body IS NOT NULL
            """
            : """
            SELECT id, version, partition_key, body FROM folio_entities
            WHERE owner = \(owner.name) AND collection = \(kind.rawValue) AND partition_key = \(key) AND body IS NOT NULL
            """
        let found = try await client.withConnection { connection in try await self.entities(on: connection, query) }
        return ReadAnswers.partition(found)
    }

    func changes(_ kind: CollectionKind, after cursor: Int64, pageSize: Int, for owner: Owner) async throws -> APIResponse {
        try await client.withConnection { connection in
            // The last position first: every change up to it has committed (see the type's notes).
            var latest: Int64 = 0
            for try await position in try await connection.query(
                "SELECT position FROM folio_owners WHERE owner = \(owner.name)", logger: self.logger
            ).decode(Int64.self) {
                latest = position
            }
            let limit = Int64(pageSize) + 1
            let query: PostgresQuery =
                self.fault == .noOwnerFilter
                ? """
                SELECT id, version, partition_key, body FROM folio_entities
                WHERE collection = \(kind.rawValue) AND version > \(cursor) AND version <= \(latest) ORDER BY version LIMIT \(limit)
                """
                : """
                SELECT id, version, partition_key, body FROM folio_entities
                WHERE owner = \(owner.name) AND collection = \(kind.rawValue) AND version > \(cursor) AND version <= \(latest)
                ORDER BY version LIMIT \(limit)
                """
            let rows = try await connection.query(query, logger: self.logger)
            var page: [(id: String, entity: StoredEntity)] = []
            for try await (id, version, partitionKey, body) in rows.decode((String, Int64, String, String?).self) {
                page.append((id, try Self.entity(version: version, partitionKey: partitionKey, body: body)))
            }
            let hasMore = page.count > pageSize
            return ReadAnswers.changes(Array(page.prefix(pageSize)), hasMore: hasMore, after: cursor, latest: latest)
        }
    }
}
