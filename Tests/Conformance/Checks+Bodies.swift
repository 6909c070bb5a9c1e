import Foundation

/// What a push body and an id may be: the body's id, duplicate members, ids by FORMAT.md's
/// rules, percent-encoding.
extension ConformanceSuite {
    static let bodyChecks: [Check] = [
        Check("body-id-mismatch", "a PUT body whose \"id\" differs from the URL's is refused and not stored") { context in
            let collection = context.collection
            let id = context.newID()
            let other = context.newID()
            let answer = try context.put(collection, id, body: context.entity(collection, id: other, note: "mismatch").data, .create)
            try context.expect(answer, [400], "PUT \(id) with a body whose id is \(other)")
            try context.expectStored(collection, id, nil, "after the refused PUT")
            try context.expectStored(collection, other, nil, "after the refused PUT")
        },
        Check("duplicate-members", "a body with duplicate member names (\"id\" twice, or inside a nested object) is refused") { context in
            let collection = context.collection
            let id = context.newID()
            let entity = context.entity(collection, id: id, note: "duplicate").description
            let escapedID = JSON.quote(id)
            let bodies = [
                ("\"id\" twice", "{\"id\":\(escapedID)," + entity.dropFirst()),
                ("\"id\" twice with another value", "{\"id\":\(JSON.quote(context.newID()))," + entity.dropFirst()),
                ("a nested duplicate", "{\"folioNested\":{\"a\":1,\"a\":2}," + entity.dropFirst()),
            ]
            for (what, body) in bodies {
                let answer = try context.put(collection, id, body: Data(body.utf8), .create)
                try context.expect(answer, [400], "PUT with \(what)")
            }
            try context.expectStored(collection, id, nil, "after the refused PUTs")
        },
        Check("body-not-object", "a PUT body that is not a JSON object is refused") { context in
            let collection = context.collection
            let id = context.newID()
            for (what, body) in [("an array", "[1]"), ("a string", "\"x\""), ("broken JSON", "{\"id\":"), ("an empty body", "")] {
                try context.expect(try context.put(collection, id, body: Data(body.utf8), .create), [400], "PUT with \(what)")
            }
            try context.expectStored(collection, id, nil, "after the refused PUTs")
        },
        Check("invalid-ids", "ids outside FORMAT.md's rules (., .., /, \\, control characters, over 256 bytes) are refused") { context in
            let collection = context.collection
            let ids = [".", "..", "a/b", "a\\b", "a\u{01}b", "a\u{7F}b", String(repeating: "x", count: 257)]
            for id in ids {
                // Dots are sent escaped, so no HTTP layer can take them for a relative path.
                let segment = id == "." ? "%2E" : id == ".." ? "%2E%2E" : CheckContext.encodeSegment(id)
                let body = context.entity(collection, id: id, note: "bad id").data
                let answer = try context.send(
                    "PUT", CheckContext.encodeSegment(collection.name) + "/" + segment,
                    headers: [("Idempotency-Key", context.newKey()), ("If-None-Match", "*"), ("Folio-Partition", collection.partition)],
                    body: body)
                try context.expect(answer, [400], "PUT of the id \(id.debugDescription.prefix(40))")
            }
        },
        Check("percent-encoded-ids", "any valid id travels percent-encoded: created, pulled, updated and deleted by the same bytes") { context in
            guard let collection = context.anyIDCollection else { throw CheckSkip(reason: "no collection accepts any id (--any-ids)") }
            let suffix = String(context.newID().prefix(8))
            let ids = ["a b+c%d?e#f&g=h;i,j:k@l~\(suffix)", "é-Ω-😀-\(suffix)", "%2F-\(suffix)", String(repeating: "é", count: 124) + suffix]
            for id in ids {
                let created = try context.create(collection, id)
                let pulled = try context.pullPartition(collection.name, collection.partition)
                guard pulled[id]?.version == created.version else {
                    throw CheckFailure(
                        "the partition does not list the id \(id.debugDescription) at \(created.version) (it lists \(pulled.keys.filter { $0.hasSuffix(suffix) }.sorted()))"
                    )
                }
                let edited = context.entity(collection, id: id, note: "edited")
                let updated = try context.put(collection, id, body: edited.data, .version(created.version))
                try context.expect(updated, [200, 201, 204], "the update of \(id.debugDescription)")
                try context.expect(
                    try context.delete(collection, id, .version(try context.version(of: updated, "the update"))), [200, 202, 204],
                    "the delete of \(id.debugDescription)")
                try context.expectStored(collection, id, nil, "after the delete of \(id.debugDescription)")
            }
        },
    ]
}
