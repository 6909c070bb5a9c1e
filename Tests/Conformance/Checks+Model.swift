import Foundation

/// A random sequence of pushes (alone and in batches) against a small model of PROTOCOL.md's
/// rules: every answer and the final partition must be what the model predicts.
extension ConformanceSuite {
    static let modelChecks: [Check] = [
        Check(
            "random-sequence",
            "120 random creates, updates, deletes, stale and unconditional pushes, replays and reused keys, alone and in batches, answer as a model of the rules predicts"
        ) { context in
            var run = ModelRun(context: context)
            try run.run(operations: 120)
        }
    ]
}

/// One push the random sequence sends.
struct ModelOperation: CustomStringConvertible {
    enum Kind: Equatable {
        case put(note: String)
        case delete
    }

    var kind: Kind
    var id: String
    var precondition: CheckContext.Precondition
    var key: String
    /// Whether this reuses an earlier key: its remembered answer, or 422 when the request differs.
    var reusing: ModelAnswer?

    var method: String {
        if case .put = kind { return "PUT" }
        return "DELETE"
    }

    var description: String {
        let what: String
        switch precondition {
        case .none: what = "no precondition"
        case .create: what = "If-None-Match *"
        case .version(let version): what = "If-Match \(version)"
        }
        var text = "\(method) \(id.prefix(8)) (\(what))"
        if case .put(let note) = kind { text += " \(note)" }
        return text + (reusing == nil ? "" : " reusing key \(key)")
    }
}

/// An answer as the model remembers it for a key.
struct ModelAnswer {
    var operation: ModelOperationSignature
    var status: Int
    var version: String?
}

/// What makes two pushes the same request: method, id, body.
struct ModelOperationSignature: Equatable {
    var method: String
    var id: String
    var note: String?
}

/// The model and the run of the random sequence.
struct ModelRun {
    let context: CheckContext
    let collection: ConformanceOptions.Collection
    let ids: [String]
    /// The live entities: the note they were stored with and their version.
    var live: [String: (note: String, version: String)] = [:]
    /// Every version each id was given, to check no version is given twice.
    var versions: [String: Set<String>] = [:]
    /// The successful answers, by key.
    var remembered: [String: ModelAnswer] = [:]
    var step = 0

    init(context: CheckContext) {
        self.context = context
        collection = context.collection
        ids = (0..<4).map { _ in context.newID() }
    }

    mutating func run(operations: Int) throws {
        var sent = 0
        while sent < operations {
            let size = context.options.hasBatches && context.random(10) < 3 ? 2 + context.random(3) : 1
            let batch = (0..<size).map { _ in nextOperation() }
            sent += batch.count
            if batch.count == 1 {
                let answer =
                    batch[0].method == "PUT"
                    ? try context.put(collection, batch[0].id, body: body(batch[0]).data, batch[0].precondition, key: batch[0].key)
                    : try context.delete(collection, batch[0].id, batch[0].precondition, key: batch[0].key)
                let version = answer.header("ETag").flatMap(CheckContext.version)
                _ = try check(batch[0], status: answer.status, version: version, body: answer.json)
            } else {
                let responses = try ConformanceSuite.sendBatch(context, batch.map(item))
                guard responses.count <= batch.count else { throw failure("a batch of \(batch.count) answered \(responses.count) responses") }
                for (index, operation) in batch.enumerated() {
                    guard index < responses.count else {
                        throw failure("the batch stopped before \(operation) although every request before it succeeded")
                    }
                    let response = responses[index]
                    let goesOn = try check(operation, status: response.status, version: response.etag, body: response.body)
                    if !goesOn {
                        guard responses.count == index + 1 else { throw failure("the batch went on after \(operation) answered \(response.status)") }
                        break
                    }
                }
            }
            if step % 10 < size { try compareWithPull() }
        }
        try compareWithPull()
    }

    /// A random operation, from the model's state.
    mutating func nextOperation() -> ModelOperation {
        step += 1
        let id = ids[context.random(ids.count)]
        let note = "step \(step)"
        let current = live[id]?.version
        let stale = versions[id, default: []].subtracting(current.map { [$0] } ?? []).sorted().first ?? "no-such-version"
        let roll = context.random(100)
        switch roll {
        case ..<25: return ModelOperation(kind: .put(note: note), id: id, precondition: .create, key: context.newKey())
        case ..<45: return ModelOperation(kind: .put(note: note), id: id, precondition: .version(current ?? stale), key: context.newKey())
        case ..<52: return ModelOperation(kind: .put(note: note), id: id, precondition: .version(stale), key: context.newKey())
        case ..<58: return ModelOperation(kind: .put(note: note), id: id, precondition: .none, key: context.newKey())
        case ..<72: return ModelOperation(kind: .delete, id: id, precondition: .version(current ?? stale), key: context.newKey())
        case ..<76: return ModelOperation(kind: .delete, id: id, precondition: .none, key: context.newKey())
        default:
            // A key used before: the same request again (a replay), or another one (refused).
            guard let (key, answer) = remembered.randomElement(using: context) else {
                return ModelOperation(kind: .put(note: note), id: id, precondition: .create, key: context.newKey())
            }
            let signature = answer.operation
            let kind: ModelOperation.Kind = signature.method == "PUT" ? .put(note: signature.note ?? "") : .delete
            var operation = ModelOperation(kind: kind, id: signature.id, precondition: .none, key: key, reusing: answer)
            if roll >= 92 { operation.kind = .put(note: note) }   // another body (or method): 422
            return operation
        }
    }

    func body(_ operation: ModelOperation) -> JSON {
        guard case .put(let note) = operation.kind else { return .null }
        return context.entity(collection, id: operation.id, note: note)
    }

    func item(_ operation: ModelOperation) -> JSON {
        var headers: [String: JSON] = ["Idempotency-Key": .string(operation.key), "Folio-Partition": .string(collection.partition)]
        switch operation.precondition {
        case .none: break
        case .create: headers["If-None-Match"] = .string("*")
        case .version(let version): headers["If-Match"] = .string("\"\(version)\"")
        }
        var item: [String: JSON] = [
            "method": .string(operation.method), "path": .string(context.path(collection.name, operation.id)), "headers": .object(headers),
        ]
        if operation.method == "PUT" { item["body"] = body(operation) }
        return .object(item)
    }

    func failure(_ why: String) -> CheckFailure { CheckFailure("step \(step) (seed \(context.options.seed)): \(why)") }

    /// Checks one answer against the model and applies it. Returns whether it succeeded (a batch
    /// goes on after it).
    mutating func check(_ operation: ModelOperation, status: Int, version: String?, body: JSON?) throws -> Bool {
        let what = "\(operation)"
        let signature = ModelOperationSignature(
            method: operation.method, id: operation.id,
            note: {
                if case .put(let note) = operation.kind { return note }
                return nil
            }())
        if let earlier = operation.reusing {
            if earlier.operation == signature {
                guard status == earlier.status, version == earlier.version || operation.method == "DELETE" else {
                    throw failure("\(what) answered \(status) \(version ?? "no ETag"), not the first answer \(earlier.status) \(earlier.version ?? "")")
                }
                return true
            }
            guard status == 422 else { throw failure("\(what) (another request under a used key) answered \(status), not 422") }
            return false
        }
        let current = live[operation.id]
        let expectedSuccess: Bool
        switch (operation.kind, operation.precondition, current) {
        case (.put, .create, nil), (.put, .none, _): expectedSuccess = true
        case (.put, .version(let wanted), let current?): expectedSuccess = wanted == current.version
        case (.put, .version, nil): expectedSuccess = false
        case (.put, .create, _?): expectedSuccess = false
        case (.delete, .version(let wanted), let current?): expectedSuccess = wanted == current.version
        case (.delete, _, nil):
            guard status == 404 || status == 410 else { throw failure("\(what) of something gone answered \(status), not 404 or 410") }
            return true
        case (.delete, _, _?): expectedSuccess = true
        }
        if expectedSuccess {
            guard (200..<300).contains(status) else { throw failure("\(what) answered \(status), not 2xx") }
            switch operation.kind {
            case .put(let note):
                if current == nil, operation.precondition.isCreate, status != 201 { throw failure("\(what) created the entity with \(status), not 201") }
                guard let version else { throw failure("\(what) answered \(status) with no ETag") }
                guard !versions[operation.id, default: []].contains(version) else { throw failure("\(what) gave the version \(version) a second time") }
                versions[operation.id, default: []].insert(version)
                live[operation.id] = (note, version)
            case .delete:
                live[operation.id] = nil
            }
            remembered[operation.key] = ModelAnswer(operation: signature, status: status, version: version)
            return true
        }
        if let current {
            guard status == 412 else { throw failure("\(what) answered \(status), not 412 (the entity is at \(current.version))") }
            guard version == current.version, body == context.entity(collection, id: operation.id, note: current.note) else {
                throw failure("\(what): the 412 is \(version ?? "no ETag") \(body?.description ?? ""), not the entity at \(current.version)")
            }
        } else {
            guard [404, 410, 412].contains(status) else { throw failure("\(what) of a deleted entity answered \(status), not 412, 404 or 410") }
            if status == 412, body != .null { throw failure("\(what) of a deleted entity: the 412's body is \(body?.description ?? "empty"), not null") }
        }
        return false
    }

    /// The partition must hold exactly the model's live entities (of the ids this run uses).
    func compareWithPull() throws {
        let pulled = try context.pullPartition(collection.name, collection.partition)
        for id in ids {
            switch (live[id], pulled[id]) {
            case (nil, nil): continue
            case (nil, _?): throw failure("the partition lists \(id), which the model deleted (a resurrection)")
            case (let expected?, nil): throw failure("the partition lacks \(id) (the model has it at \(expected.version))")
            case (let expected?, let entity?):
                guard entity.version == expected.version, entity.entity == context.entity(collection, id: id, note: expected.note) else {
                    throw failure(
                        "the partition has \(id) at \(entity.version ?? "none") \(entity.entity), the model at \(expected.version) (\(expected.note))")
                }
            }
        }
    }
}

extension CheckContext.Precondition {
    var isCreate: Bool {
        if case .create = self { return true }
        return false
    }
}

extension Dictionary {
    /// A random element in a stable order (by the keys' description), drawn from the suite's seed.
    func randomElement(using context: CheckContext) -> (key: Key, value: Value)? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted { "\($0.key)" < "\($1.key)" }
        return sorted[context.random(sorted.count)]
    }
}
