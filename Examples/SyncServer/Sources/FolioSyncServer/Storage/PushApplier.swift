import Folio
import Foundation

/// Applies pushes inside one Folio transaction: the idempotency memory, the preconditions, the
/// change, its version and feed entry, the statistics of the days it touches, and the
/// remembered response, all committed together or not at all.
///
/// Only storage failures throw (they roll the whole transaction back); everything a client did
/// wrong is an answer.
final class PushApplier {
    private let transaction: Transaction
    private let now: Date
    private let today: String
    /// The change counter as this transaction moved it; written back by ``finish()``.
    private var counter: Int64?
    private var counterChanged = false

    init(_ transaction: Transaction, now: Date) {
        self.transaction = transaction
        self.now = now
        self.today = Day.utc(now)
    }

    /// Answers a push: from the idempotency memory if its key was seen, else by applying it.
    func apply(_ push: Push) throws -> APIResponse {
        if let key = push.key, let record = try transaction.get(IdempotencyRecord.self, id: key.id) {
            // Another request under a used key is refused, never answered from the first one's memory
            // (records stored before requests were kept compare by method and path only).
            guard record.method == push.method, record.path == push.target, record.request == nil || record.request == push.body else {
                let what = record.method == push.method && record.path == push.target ? "with another body" : "for \(record.method) \(record.path)"
                return .error(422, "the Idempotency-Key \(key.text) was used \(what); a key names one request (\(push.method) \(push.target))",
                              field: "Idempotency-Key")
            }
            return record.response
        }
        let response: APIResponse
        switch (push.change, push.kind) {
        case (.upsertTodo(let todo), _): response = try upsert(todo, push)
        case (.upsertTag(let tag), _): response = try upsert(tag, push)
        case (.delete, .todos): response = try delete(TodoDocument.self, push)
        case (.delete, .tags): response = try delete(TagDocument.self, push)
        case (.delete, .dailyStats): response = .error(405, "dailyStats are read-only", field: "collection")
        }
        if response.isSuccess, let key = push.key {
            try transaction.upsert(IdempotencyRecord(
                id: key.id, key: key.text, date: today, storedAt: now, method: push.method, path: push.target,
                status: response.status, headers: response.headers, body: response.body, request: push.body))
        }
        return response
    }

    /// Stores the change counter if it moved. Call once, after the last push.
    func finish() throws {
        if counterChanged, let counter { try transaction.upsert(ChangeCounter(value: counter)) }
    }

    // MARK: Changes

    private func upsert<D: ServerDocument>(_ document: D, _ push: Push) throws -> APIResponse {
        let current = try transaction.get(D.self, id: document.id)
        if let current {
            let version = try version(of: D.self, id: document.id)
            if let ifMatch = push.ifMatch, !ifMatch.matches(version) { return .json(412, current.json, version: version) }
            if let ifNoneMatch = push.ifNoneMatch, ifNoneMatch.matches(version) { return .json(412, current.json, version: version) }
            // The same content again changes nothing, and keeps its version.
            if current.fields == document.fields { return .json(200, current.json, version: version) }
        } else if push.ifMatch != nil {
            // The client changed an entity this server no longer has: a conflict with a deletion.
            return .json(404, .null)
        }
        let sequence = try nextSequence()
        try transaction.upsert(document)
        try transaction.upsert(D.Version(id: document.id, partitionKey: document.partitionKey, sequence: sequence, deleted: false))
        try refreshStatistics(of: [current?.statisticsDay, document.statisticsDay])
        return .json(current == nil ? 201 : 200, document.json, version: sequence)
    }

    private func delete<D: ServerDocument>(_ type: D.Type, _ push: Push) throws -> APIResponse {
        guard let current = try transaction.get(D.self, id: push.id) else { return .json(404, .null) }
        let version = try version(of: D.self, id: push.id)
        if let ifMatch = push.ifMatch, !ifMatch.matches(version) { return .json(412, current.json, version: version) }
        if let ifNoneMatch = push.ifNoneMatch, ifNoneMatch.matches(version) { return .json(412, current.json, version: version) }
        try remove(current)
        try refreshStatistics(of: [current.statisticsDay])
        return .noContent
    }

    /// Deletes a document and leaves its tombstone in the feed.
    private func remove<D: ServerDocument>(_ document: D) throws {
        let sequence = try nextSequence()
        try transaction.delete(D.self, id: document.id)
        try transaction.upsert(D.Version(id: document.id, partitionKey: document.partitionKey, sequence: sequence, deleted: true))
    }

    /// Recomputes the statistics of these days from their todos, as this transaction sees them.
    private func refreshStatistics(of days: [String?]) throws {
        for day in Set(days.compactMap { $0 }).sorted() {
            let todos = try transaction.fetch(Query<TodoDocument>(.day(day)))
            let current = try transaction.get(DailyStatDocument.self, id: day)
            guard let stat = DailyStats.compute(day: day, todos: todos) else {
                if let current { try remove(current) }
                continue
            }
            if current?.fields == stat.fields { continue }
            let sequence = try nextSequence()
            try transaction.upsert(stat)
            try transaction.upsert(DailyStatVersion(id: day, partitionKey: stat.partitionKey, sequence: sequence, deleted: false))
        }
    }

    // MARK: Versions

    /// The version of a stored entity; 0 for one stored without a version (added by hand).
    private func version<D: ServerDocument>(of type: D.Type, id: String) throws -> Int64 {
        guard let record = try transaction.get(D.Version.self, id: id), !record.deleted else { return 0 }
        return record.sequence
    }

    private func nextSequence() throws -> Int64 {
        let next = try currentSequence() + 1
        counter = next
        counterChanged = true
        return next
    }

    private func currentSequence() throws -> Int64 {
        if let counter { return counter }
        let stored = try transaction.get(ChangeCounter.self, id: ChangeCounter.entityID)?.value ?? 0
        counter = stored
        return stored
    }
}
