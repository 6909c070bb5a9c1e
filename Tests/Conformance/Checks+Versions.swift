import Foundation

/// Versions, preconditions, 412 bodies, tombstones and unconditional pushes.
extension ConformanceSuite {
    static let versionChecks: [Check] = [
        Check("create", "If-None-Match * on a new id is 201 with a quoted ETag, and the pull shows it") { context in
            let collection = context.collection
            let id = context.newID()
            let created = try context.create(collection, id)
            try context.expectStored(collection, id, created, "after the create")
        },
        Check("update", "If-Match with the current version is 2xx with a new ETag") { context in
            let collection = context.collection
            let id = context.newID()
            let created = try context.create(collection, id)
            let edited = context.entity(collection, id: id, note: "edited")
            let answer = try context.put(collection, id, body: edited.data, .version(created.version))
            try context.expect(answer, [200, 201, 204], "PUT with If-Match: the current version")
            let version = try context.version(of: answer, "the update")
            guard version != created.version else { throw CheckFailure("the update kept the version \(version)") }
            try checkAnswerID(answer, id)
            try context.expectStored(collection, id, (edited, version), "after the update")
        },
        Check("stale-if-match", "If-Match with a stale version is 412 with the current entity and its ETag, nothing applied") { context in
            let collection = context.collection
            let id = context.newID()
            let created = try context.create(collection, id)
            let edited = context.entity(collection, id: id, note: "edited")
            let updated = try context.put(collection, id, body: edited.data, .version(created.version))
            let current = (edited, try context.version(of: updated, "the update"))
            let stale = try context.put(collection, id, body: context.entity(collection, id: id, note: "stale").data, .version(created.version))
            try expectConflict(stale, current, "PUT with a stale If-Match", context)
            try context.expectStored(collection, id, current, "after the refused PUT")
        },
        Check("create-over-live", "If-None-Match * on a live entity is 412 with that entity") { context in
            let collection = context.collection
            let id = context.newID()
            let created = try context.create(collection, id)
            let again = try context.put(collection, id, body: context.entity(collection, id: id, note: "again").data, .create)
            try expectConflict(again, created, "PUT with If-None-Match: * over a live entity", context)
            try context.expectStored(collection, id, created, "after the refused create")
        },
        Check("stale-delete", "DELETE with a stale If-Match is 412 with the current entity, nothing deleted") { context in
            let collection = context.collection
            let id = context.newID()
            let created = try context.create(collection, id)
            let edited = context.entity(collection, id: id, note: "edited")
            let current = (edited, try context.version(of: try context.put(collection, id, body: edited.data, .version(created.version)), "the update"))
            try expectConflict(try context.delete(collection, id, .version(created.version)), current, "DELETE with a stale If-Match", context)
            try context.expectStored(collection, id, current, "after the refused DELETE")
        },
        Check("delete", "DELETE with If-Match is 2xx; the partition no longer lists it; again is 404 or 410") { context in
            let collection = context.collection
            let id = context.newID()
            let created = try context.create(collection, id)
            try context.expect(try context.delete(collection, id, .version(created.version)), [200, 202, 204], "DELETE with If-Match: the current version")
            try context.expectStored(collection, id, nil, "after the DELETE")
            try context.expect(try context.delete(collection, id, .version(created.version)), [404, 410], "a second DELETE (already gone)")
            try context.expect(try context.delete(collection, context.newID(), .none), [404, 410], "DELETE of an id never created")
        },
        Check("put-after-delete", "PUT with If-Match of a deleted or never-created entity is 412 null, 404 or 410") { context in
            let collection = context.collection
            let id = context.newID()
            let created = try context.create(collection, id)
            try context.expect(try context.delete(collection, id, .version(created.version)), [200, 202, 204], "DELETE")
            for (target, what) in [(id, "a deleted entity"), (context.newID(), "an entity never created")] {
                let answer = try context.put(collection, target, body: context.entity(collection, id: target, note: "late").data, .version(created.version))
                try context.expect(answer, [404, 410, 412], "PUT with If-Match of \(what)")
                if answer.status == 412 {
                    guard answer.json == .null else { throw CheckFailure("PUT with If-Match of \(what): a 412 must have the body null, not \(answer.summary)") }
                    guard answer.header("ETag") == nil else {
                        throw CheckFailure("PUT with If-Match of \(what): a 412 for a deleted entity has no ETag (\(answer.summary))")
                    }
                }
                try context.expectStored(collection, target, nil, "after the refused PUT of \(what)")
            }
        },
        Check("recreate-tombstone", "If-None-Match * over a deleted entity is 201 with a version never given to it before") { context in
            let collection = context.collection
            let id = context.newID()
            let created = try context.create(collection, id)
            try context.expect(try context.delete(collection, id, .version(created.version)), [200, 202, 204], "DELETE")
            let recreated = try context.create(collection, id, note: "recreated")
            guard recreated.version != created.version else { throw CheckFailure("the recreated entity reuses the version \(created.version)") }
            try context.expectStored(collection, id, recreated, "after the recreation")
        },
        Check("unconditional", "PUT and DELETE with no precondition apply over whatever is there") { context in
            let collection = context.collection
            let id = context.newID()
            let first = context.entity(collection, id: id, note: "first")
            let created = try context.put(collection, id, body: first.data, .none)
            try context.expect(created, [200, 201], "PUT with no precondition of a new id")
            let second = context.entity(collection, id: id, note: "second")
            let updated = try context.put(collection, id, body: second.data, .none)
            try context.expect(updated, [200, 201, 204], "PUT with no precondition over a live entity")
            try context.expectStored(collection, id, (second, try context.version(of: updated, "the unconditional PUT")), "after the unconditional PUT")
            try context.expect(try context.delete(collection, id, .none), [200, 202, 204], "DELETE with no precondition")
            try context.expectStored(collection, id, nil, "after the unconditional DELETE")
        },
    ]

    /// Fails unless `answer` is 412 with `current` as its body and its version as `ETag`.
    static func expectConflict(_ answer: RawResponse, _ current: (entity: JSON, version: String), _ what: String, _ context: CheckContext) throws {
        try context.expect(answer, [412], what)
        guard answer.json == current.entity else {
            throw CheckFailure("\(what): the 412's body is \(answer.summary), not the current entity \(current.entity)")
        }
        let version = try context.version(of: answer, what)
        guard version == current.version else { throw CheckFailure("\(what): the 412's ETag is \(version), not the current version \(current.version)") }
    }

    /// Fails when a 2xx answer's body is an entity with another id than the URL's.
    static func checkAnswerID(_ answer: RawResponse, _ id: String) throws {
        if let answerID = answer.json?["id"], answerID != .string(id) {
            throw CheckFailure("the answer's body is about id \(answerID), not \(id)")
        }
    }
}
