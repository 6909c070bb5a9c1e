import Foundation

/// Idempotency keys: a replay answers the same and applies nothing; a reused key on another
/// request is 422; concurrent requests with one key apply once.
extension ConformanceSuite {
    static let idempotencyChecks: [Check] = [
        Check("replay", "the same key and request again gets the same answer and applies nothing") { context in
            let collection = context.collection
            let id = context.newID()
            let first = context.entity(collection, id: id, note: "first")
            let createKey = context.newKey()
            let created = try context.put(collection, id, body: first.data, .create, key: createKey)
            try context.expect(created, [201], "the create")
            let createdVersion = try context.version(of: created, "the create")
            let second = context.entity(collection, id: id, note: "second")
            let updateKey = context.newKey()
            let updated = try context.put(collection, id, body: second.data, .version(createdVersion), key: updateKey)
            try context.expect(updated, [200, 201, 204], "the update")
            let current = (second, try context.version(of: updated, "the update"))
            // Replays of both: the create's answer again, and nothing applied (the update stays).
            for (key, body, precondition, original, what) in [
                (createKey, first, CheckContext.Precondition.create, created, "the create"),
                (updateKey, second, .version(createdVersion), updated, "the update"),
            ] {
                let replay = try context.put(collection, id, body: body.data, precondition, key: key)
                guard replay.status == original.status, replay.header("ETag") == original.header("ETag"), replay.json == original.json else {
                    throw CheckFailure("the replay of \(what) answered \(replay.summary), not the first answer \(original.summary)")
                }
                try context.expectStored(collection, id, current, "after the replay of \(what)")
            }
            // A delete's replay, once the entity is gone, still answers as the first time.
            let deleteKey = context.newKey()
            let deleted = try context.delete(collection, id, .version(current.1), key: deleteKey)
            try context.expect(deleted, [200, 202, 204], "the delete")
            let again = try context.delete(collection, id, .version(current.1), key: deleteKey)
            guard again.status == deleted.status else { throw CheckFailure("the replay of the delete answered \(again.summary), not \(deleted.summary)") }
        },
        Check("replay-same-json", "the same body with its members reordered and spaced is the same request") { context in
            let collection = context.collection
            let id = context.newID()
            let entity = context.entity(collection, id: id, note: "spaced")
            let key = context.newKey()
            let created = try context.put(collection, id, body: entity.data, .create, key: key)
            try context.expect(created, [201], "the create")
            guard case .object(let members) = entity else { throw CheckFailure("the sample is not an object") }
            let reordered =
                "{\n  " + members.sorted { $0.key > $1.key }.map { JSON.quote($0.key) + " : " + $0.value.description }.joined(separator: ",\n  ") + "\n}"
            let replay = try context.put(collection, id, body: Data(reordered.utf8), .create, key: key)
            guard replay.status == 201, replay.header("ETag") == created.header("ETag") else {
                throw CheckFailure("the same JSON value with other bytes answered \(replay.summary), not the first answer \(created.summary)")
            }
        },
        Check("key-reuse", "a key reused with another body, path or method is refused, naming the key, and applies nothing") { context in
            let collection = context.collection
            let id = context.newID()
            let first = context.entity(collection, id: id, note: "first")
            let key = context.newKey()
            let created = try context.put(collection, id, body: first.data, .create, key: key)
            try context.expect(created, [201], "the create")
            let current = (first, try context.version(of: created, "the create"))
            let otherID = context.newID()
            let attempts: [(String, () throws -> RawResponse)] = [
                ("another body", { try context.put(collection, id, body: context.entity(collection, id: id, note: "other").data, .create, key: key) }),
                ("another id", { try context.put(collection, otherID, body: context.entity(collection, id: otherID, note: "first").data, .create, key: key) }),
                ("another method", { try context.delete(collection, id, .version(current.1), key: key) }),
            ]
            for (what, attempt) in attempts {
                let answer = try attempt()
                try context.expect(answer, [422], "the key of a create reused with \(what)")
                guard answer.json != nil, String(decoding: answer.body, as: UTF8.self).contains(key) else {
                    throw CheckFailure("the 422 for \(what) has no JSON body naming the key \(key): \(answer.summary)")
                }
            }
            try context.expectStored(collection, id, current, "after the refused reuses")
            try context.expectStored(collection, otherID, nil, "after the refused reuse on another id")
        },
        Check("concurrent-key", "two requests with one key at once apply once (the other waits, or gets 429 with Retry-After)") { context in
            let collection = context.collection
            let id = context.newID()
            let created = try context.create(collection, id)
            let body = context.entity(collection, id: id, note: "concurrent").data
            let key = context.newKey()
            let answers = Locked<[Result<RawResponse, any Error>]>([])
            let group = DispatchGroup()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    let result = Result { try context.put(collection, id, body: body, .version(created.version), key: key) }
                    answers.withLock { $0.append(result) }
                }
            }
            guard group.wait(timeout: .now() + context.options.timeout * 2) == .success else {
                throw CheckFailure("no answers within \(context.options.timeout * 2) s")
            }
            let responses = try answers.withLock { $0 }.map { try $0.get() }
            let applied = responses.filter { (200..<300).contains($0.status) }
            for response in responses where !(200..<300).contains(response.status) {
                guard response.status == 429, response.header("Retry-After") != nil else {
                    throw CheckFailure("a concurrent request with the key answered \(response.summary), not 2xx or 429 with Retry-After")
                }
            }
            guard let first = applied.first else { throw CheckFailure("neither concurrent request succeeded: \(responses.map(\.summary))") }
            let version = try context.version(of: first, "the concurrent update")
            for other in applied.dropFirst() where other.header("ETag") != first.header("ETag") {
                throw CheckFailure("the two concurrent requests answered different versions: \(first.summary) and \(other.summary)")
            }
            try context.expectStored(collection, id, (context.entity(collection, id: id, note: "concurrent"), version), "after the concurrent requests")
        },
    ]
}

/// A value behind a lock, for results gathered from several threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
