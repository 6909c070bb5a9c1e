import Foundation

/// Pulls: partitions (the empty one included), the query rules, unserved and server-computed
/// collections, and the change feed (or its absence).
extension ConformanceSuite {
    static let pullChecks: [Check] = [
        Check("empty-partition", "?partition= empty is the unpartitioned collection's content") { context in
            guard let collection = context.options.collections.first(where: { $0.partition.isEmpty }) else {
                throw CheckSkip(reason: "no unpartitioned collection (--collection NAME@=JSON)")
            }
            let id = context.newID()
            let created = try context.create(collection, id)
            try context.expectStored(collection, id, created, "GET \(collection.name)?partition=")
        },
        Check("pull-needs-query", "GET {collection} with neither partition nor since is refused") { context in
            let answer = try context.send("GET", context.path(context.collection.name))
            try context.expect(answer, [400], "GET \(context.collection.name) with no query")
        },
        Check("unserved-collection", "a collection the server does not serve is 404 by partition and by feed") { context in
            let name = context.options.unservedCollection
            try context.expect(try context.send("GET", context.path(name) + "?partition="), [404], "GET \(name)?partition=")
            try context.expect(try context.send("GET", context.path(name) + "?partition=2026-11-22"), [404], "GET \(name)?partition=2026-11-22")
            try context.expect(try context.send("GET", context.path(name) + "?since="), [404], "GET \(name)?since=")
        },
        Check("server-computed", "a pull-only collection answers its partition with 200 and refuses pushes with 405") { context in
            guard !context.options.serverComputed.isEmpty else { throw CheckSkip(reason: "no --server-computed collection") }
            for computed in context.options.serverComputed {
                _ = try context.pullPartition(computed.name, computed.partition)
                let id = context.newID()
                let put = try context.send(
                    "PUT", context.path(computed.name, id),
                    headers: [("Idempotency-Key", context.newKey()), ("If-None-Match", "*"), ("Folio-Partition", computed.partition)],
                    body: Data("{\"id\":\(JSON.quote(id))}".utf8))
                try context.expect(put, [405], "PUT to the server-computed \(computed.name)")
                let delete = try context.send("DELETE", context.path(computed.name, id), headers: [("Idempotency-Key", context.newKey())])
                try context.expect(delete, [405], "DELETE in the server-computed \(computed.name)")
            }
        },
        Check("feed", "?since= pages oldest first to the end, lists deletions as {\"id\", \"deleted\": true}, and resumes from its cursor") { context in
            let collection = context.collection
            guard context.options.hasChangeFeed else {
                try context.expect(
                    try context.send("GET", context.path(collection.name) + "?since="), [501], "GET \(collection.name)?since= on a server without a feed")
                return
            }
            let live = context.newID(), gone = context.newID()
            let liveCreated = try context.create(collection, live)
            let goneCreated = try context.create(collection, gone)
            try context.expect(try context.delete(collection, gone, .version(goneCreated.version)), [200, 202, 204], "DELETE")
            let (changes, cursor) = try readFeed(context, collection.name, from: nil)
            guard let liveChange = changes[live], liveChange.deleted == false, liveChange.version == liveCreated.version,
                liveChange.entity == liveCreated.entity
            else {
                throw CheckFailure("the feed does not end with \(live) at version \(liveCreated.version) (it has \(String(describing: changes[live])))")
            }
            guard changes[gone]?.deleted == true else {
                throw CheckFailure("the feed does not list \(gone) as deleted (it has \(String(describing: changes[gone])))")
            }
            // From the last cursor: only what changed since.
            let later = context.newID()
            let laterCreated = try context.create(collection, later)
            let (since, _) = try readFeed(context, collection.name, from: cursor)
            guard since[later]?.version == laterCreated.version else {
                throw CheckFailure("the feed from the last cursor does not list the entity created since")
            }
            guard since[live] == nil, since[gone] == nil else { throw CheckFailure("the feed from the last cursor lists changes older than the cursor") }
        },
    ]

    /// One change of the feed, the last entry per id winning (entries apply oldest first).
    struct FeedChange: CustomStringConvertible {
        var deleted: Bool
        var version: String?
        var entity: JSON?
        var description: String { deleted ? "deleted" : "version \(version ?? "none") \(entity?.description ?? "")" }
    }

    /// Reads the feed from `cursor` (nil: from the beginning) to its end, at most 10,000 pages.
    static func readFeed(_ context: CheckContext, _ collection: String, from start: JSON?) throws -> ([String: FeedChange], JSON) {
        var cursor = start
        var changes: [String: FeedChange] = [:]
        for _ in 0..<10_000 {
            let since: String
            switch cursor {
            case nil: since = ""
            case .string(let text)?: since = CheckContext.encodeSegment(text)
            case let value?: since = CheckContext.encodeSegment(value.description)
            }
            let answer = try context.send("GET", context.path(collection) + "?since=" + since)
            try context.expect(answer, [200], "GET \(collection)?since=\(since)")
            guard let body = answer.json, let list = body["changes"]?.arrayValue else {
                throw CheckFailure("a feed page has no \"changes\" array: \(answer.summary)")
            }
            for (index, item) in list.enumerated() {
                guard let id = item["id"]?.stringValue else { throw CheckFailure("changes[\(index)].id is not a string") }
                if item["deleted"] == .bool(true) {
                    changes[id] = FeedChange(deleted: true)
                    continue
                }
                guard let entity = item["entity"], entity.isObject else { throw CheckFailure("changes[\(index)].entity is not an object") }
                changes[id] = FeedChange(deleted: false, version: item["version"]?.stringValue ?? item["version"]?.description, entity: entity)
            }
            switch body["cursor"] {
            case .string?, .number?: cursor = body["cursor"]
            default: throw CheckFailure("a feed page has no cursor (a JSON string): \(answer.summary)")
            }
            switch body["hasMore"] {
            case .bool(true)?: continue
            case .bool(false)?, nil: return (changes, cursor!)
            default: throw CheckFailure("hasMore is not a boolean: \(answer.summary)")
            }
        }
        throw CheckFailure("the feed has more than 10,000 pages")
    }
}
