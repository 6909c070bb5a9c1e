internal import Foundation

/// Pulling: server state into the store, never clobbering a pending local change.
extension SyncEngine {
    /// Fetches one partition from the server and stores it: the server's entities with their
    /// versions, and the deletion of local entities the server no longer has. An entity with
    /// local changes not yet acknowledged keeps them: the server's value is merged under them
    /// field by field, and the pending command settles the rest when it is sent.
    /// - Parameters:
    ///   - type: The entity type.
    ///   - partition: `"2026-11-21"` for a day, `"2026-11"` for a month, `""` for an
    ///     unpartitioned collection.
    /// - Returns: How many entities were stored or deleted.
    /// - Throws: ``FolioError``: ``FolioError/Code/invalidName`` for a partition key that does
    ///   not fit the type; ``FolioError/Code/network``, ``FolioError/Code/unauthorized`` or
    ///   ``FolioError/Code/badResponse`` (naming the field) from the server, in which case
    ///   nothing was stored.
    @discardableResult
    public func pull<E: Entity>(_ type: E.Type, partition: String) async throws -> Int {
        let collection = configuration.collections[E.collection] ?? SyncedCollection(E.self, policy: .threeWayMerge)
        let key = try Self.validPartition(partition, granularity: collection.granularity)
        return try await exclusive { try await self.pullPartition(collection, key: key) }
    }

    /// Fetches the changes since the last such pull (PROTOCOL.md, "Changes since a cursor") and
    /// stores them as ``pull(_:partition:)`` does, page after page. The cursor is kept in
    /// `.folio/sync.json`, written after the changes are stored (so a crash repeats a page, which
    /// is harmless, and never skips one).
    /// - Parameter type: The entity type.
    /// - Returns: How many entities were stored or deleted.
    @discardableResult
    public func pullChanges<E: Entity>(_ type: E.Type) async throws -> Int {
        let collection = configuration.collections[E.collection] ?? SyncedCollection(E.self, policy: .threeWayMerge)
        return try await exclusive {
            var total = 0
            var cursor = try await self.store.syncCursor(for: collection.collection)
            for _ in 0..<100_000 {
                let response = try await self.transport.pull(PullRequest(collection: collection.collection, partition: nil, cursor: cursor))
                try self.checkNotStopped()
                if let reason = response.notServed {
                    // No feed (or not this collection): the sync goes on; nothing local changes.
                    self.emit(.notServed(collection: collection.collection, partition: nil, reason: reason))
                    return total
                }
                total += try await self.store(response.items, of: collection, wholePartition: nil)
                cursor = response.cursor
                if let cursor { try await self.store.setSyncCursor(cursor, for: collection.collection) }
                guard response.hasMore, response.cursor != nil else { break }
            }
            self.emit(.pulled(collection: collection.collection, partition: nil, count: total))
            return total
        }
    }

    static func validPartition(_ text: String, granularity: PartitionGranularity) throws(FolioError) -> String {
        let valid: PartitionKey?
        switch granularity {
        case .none: valid = text.isEmpty ? .whole : nil
        case .day: valid = PartitionKey.day(parsing: text)
        case .month: valid = PartitionKey.month(parsing: text)
        }
        guard let valid else { throw FolioError(.invalidName, "\"\(text)\" is not a \(granularity) partition key") }
        return valid.text
    }

    func pullPartition(_ collection: SyncedCollection, key: String) async throws -> Int {
        let response = try await transport.pull(PullRequest(collection: collection.collection, partition: key))
        try checkNotStopped()
        markReachable()
        if let reason = response.notServed {
            emit(.notServed(collection: collection.collection, partition: key, reason: reason))
            return 0
        }
        let count = try await store(response.items, of: collection, wholePartition: key)
        status.lastSuccess = Date()
        emit(.pulled(collection: collection.collection, partition: key, count: count))
        return count
    }

    /// Stores pulled items in one transaction; see ``pull(_:partition:)``.
    private func store(_ items: [PullResponse.Item], of collection: SyncedCollection, wholePartition: String?) async throws -> Int {
        struct Admitted: Sendable {
            var id: String
            var json: JSONValue?
            var key: PartitionKey?
            var version: String?
        }
        // Check everything before changing anything: one bad item refuses the whole answer.
        var admitted: [Admitted] = []
        for (index, item) in items.enumerated() {
            let field = "\(collection.collection) item \(index)"
            do { try Names.validateID(item.id) } catch {
                throw FolioError(.badResponse, "the server's \(field) has an unusable id: \(error.message)")
            }
            guard let data = item.entity else {
                admitted.append(Admitted(id: item.id, json: nil, key: nil, version: nil))
                continue
            }
            guard let json = Self.json(data), json.objectValue != nil else {
                throw FolioError(.badResponse, "the server's \(field) (\(item.id)) is not a JSON object", entityID: item.id)
            }
            let key: PartitionKey
            do { key = try collection.admit(json, item.id, coder) } catch {
                throw FolioError(.badResponse, "the server's \(field) is unusable: \(error.message)", entityID: item.id)
            }
            admitted.append(Admitted(id: item.id, json: json, key: key, version: item.version))
        }
        let checked = admitted
        let name = collection.collection
        let granularity = collection.granularity
        let pullOnly = collection.mode.kind == .pullOnly
        let (count, warnings): (Int, [String]) = try await store.syncWrite { tx, outbox in
            try collection.register(tx)
            var count = 0
            var warnings: [String] = []
            for item in checked {
                if let first = try outbox.firstUnacknowledged(collection: name, id: item.id) {
                    // The local change stays on top of the server's value.
                    guard let server = item.json, let address = try tx.address(of: item.id, collection: name, granularity: granularity),
                        let local = try tx.json(at: address, id: item.id)
                    else { continue }
                    let base = first["base"]
                    let merged = ThreeWayMerge.merge(base: base, local: local, server: server)
                    guard merged != local else { continue }
                    do {
                        try tx.stageServerEntity(merged, id: item.id, of: collection, version: nil)
                        count += 1
                    } catch {
                        warnings.append("kept the local \(name)/\(item.id) unmerged: the merge with the server's does not decode: \(error)")
                    }
                    continue
                }
                let target = item.key.map { PartitionAddress(collection: name, granularity: granularity, key: $0) }
                try tx.stageServerValue(
                    item.json, at: target, collection: name, granularity: granularity, id: item.id,
                    version: item.version ?? "")
                count += 1
            }
            if let wholePartition {
                // What the server no longer has is gone, unless a local change of it is pending,
                // or the server never knew it (a local create whose command was dropped).
                let address = PartitionAddress(collection: name, granularity: granularity, key: PartitionKey(text: wholePartition))
                let present = Set(checked.map(\.id))
                let partition = try tx.storedPartition(address)
                for id in partition.entities.keys.sorted() where !present.contains(id) {
                    guard pullOnly || partition.versions[id] != nil else { continue }
                    guard try outbox.firstUnacknowledged(collection: name, id: id) == nil else { continue }
                    try tx.stageServerValue(nil, at: nil, collection: name, granularity: granularity, id: id, version: nil)
                    count += 1
                }
            }
            return (count, warnings)
        }
        for warning in warnings { await store.report(.warning, warning) }
        return count
    }
}
