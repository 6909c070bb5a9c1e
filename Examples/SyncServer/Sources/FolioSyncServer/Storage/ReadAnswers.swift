/// The answers to pulls, built from what a storage read: one place, so both storages answer a
/// pull byte for byte alike.
enum ReadAnswers {
    /// `GET {collection}/{id}`: the entity and its version, or `404 null`.
    static func entity(_ stored: StoredEntity?) -> APIResponse {
        guard let stored, let fields = stored.fields else { return .json(404, .null) }
        return .json(200, .object(fields), version: stored.version)
    }

    /// `GET {collection}?partition=KEY`: every entity of the partition with its version, by id.
    /// - Parameter entities: The partition's entities by id (tombstones are left out).
    static func partition(_ entities: [String: StoredEntity]) -> APIResponse {
        let items: [JSONValue] = entities.keys.sorted().compactMap { id in
            guard let entity = entities[id], let fields = entity.fields else { return nil }
            return .object(["id": .string(id), "version": .string(String(entity.version)), "entity": .object(fields)])
        }
        return .json(200, .object(["entities": .array(items)]))
    }

    /// `GET {collection}?since=CURSOR`: the entities changed after the cursor, oldest change
    /// first, each once with its current state (or as deleted).
    /// - Parameters:
    ///   - page: The changes after the cursor, ordered by version, at most the page size.
    ///   - hasMore: Whether more changes follow the page.
    ///   - cursor: The cursor the client sent.
    ///   - latest: The owner's last position, as read with (or before) the page: every change up
    ///     to it was committed, so the next cursor may move there when the page is the last.
    static func changes(_ page: [(id: String, entity: StoredEntity)], hasMore: Bool, after cursor: Int64, latest: Int64) -> APIResponse {
        let changes: [JSONValue] = page.map { change in
            if let fields = change.entity.fields {
                return .object(["id": .string(change.id), "version": .string(String(change.entity.version)), "entity": .object(fields)])
            }
            return .object(["id": .string(change.id), "deleted": .bool(true)])
        }
        let next = hasMore ? (page.last?.entity.version ?? cursor) : max(cursor, latest)
        return .json(200, .object(["changes": .array(changes), "cursor": .string(String(next)), "hasMore": .bool(hasMore)]))
    }
}
