import Foundation

/// Applies pushes inside one transaction of a storage: the idempotency memory, the
/// preconditions, the change, its version and feed position, the statistics of the days it
/// touches, and the remembered response, all committed together or not at all.
///
/// The rules live here once, for both storages: the Folio folder and PostgreSQL differ only in
/// the ``PushStore`` they hand in. Only storage failures throw (they roll the whole transaction
/// back); everything a client did wrong is an answer.
final class PushApplier<Store: PushStore> {
    private let store: Store
    private let now: Date
    private let today: String
    /// The last position as this transaction moved it; written back by ``finish()``.
    private var position: Int64?
    private var positionMoved = false

    init(_ store: Store, now: Date) {
        self.store = store
        self.now = now
        self.today = Day.utc(now)
    }

    /// Applies pushes in order, stopping after the first that does not succeed (a `DELETE`
    /// answered 404 or 410 succeeded: it was already gone); an item that could not be parsed
    /// answers with its error and stops the run. Then moves the owner's last position.
    /// - Returns: One response per push processed.
    /// - Throws: What the storage threw; the caller rolls everything back.
    func applyAll(_ pushes: [Result<Push, RequestError>]) throws -> [APIResponse] {
        var responses: [APIResponse] = []
        for item in pushes {
            let response: APIResponse
            switch item {
            case .success(let push): response = try apply(push)
            case .failure(let error): response = error.response
            }
            responses.append(response)
            // A DELETE of something already gone is applied (PROTOCOL.md): the run goes on.
            var gone = false
            if case .success(let push) = item { gone = push.method == "DELETE" && (response.status == 404 || response.status == 410) }
            if !response.isSuccess && !gone { break }
        }
        try finish()
        return responses
    }

    /// Answers a push: from the idempotency memory if its key was seen, else by applying it.
    func apply(_ push: Push) throws -> APIResponse {
        if let key = push.key, let record = try store.rememberedResponse(forKey: key.id) {
            // Another request under a used key is refused, never answered from the first one's memory
            // (records stored before requests were kept compare by method and path only).
            guard record.method == push.method, record.path == push.target, record.request == nil || record.request == push.body else {
                let what = record.method == push.method && record.path == push.target ? "with another body" : "for \(record.method) \(record.path)"
                return .error(
                    422, "the Idempotency-Key \(key.text) was used \(what); a key names one request (\(push.method) \(push.target))",
                    field: "Idempotency-Key")
            }
            return record.response
        }
        let response: APIResponse
        switch (push.change, push.kind) {
        case (.upsertTodo(let todo), _): response = try upsert(.todos, id: todo.id, fields: todo.fields, partitionKey: todo.date, push)
        case (.upsertTag(let tag), _): response = try upsert(.tags, id: tag.id, fields: tag.fields, partitionKey: "", push)
        case (.delete, .dailyStats): response = .error(405, "dailyStats are read-only", field: "collection")
        case (.delete, let kind): response = try delete(kind, push)
        }
        if response.isSuccess, let key = push.key {
            try store.remember(
                IdempotencyRecord(
                    id: key.id, key: key.text, date: today, storedAt: now, method: push.method, path: push.target,
                    status: response.status, headers: response.headers, body: response.body, request: push.body))
        }
        return response
    }

    /// Stores the last position if it moved. Call once, after the last push.
    func finish() throws {
        if positionMoved, let position { try store.setLastPosition(position) }
    }

    // MARK: Changes

    private func upsert(_ kind: CollectionKind, id: String, fields: JSONObject, partitionKey: String, _ push: Push) throws -> APIResponse {
        let stored = try store.entity(kind, id: id)
        let current = stored?.exists == true ? stored : nil
        if let current, let currentFields = current.fields {
            if let ifMatch = push.ifMatch, !ifMatch.matches(current.version) { return .json(412, .object(currentFields), version: current.version) }
            if let ifNoneMatch = push.ifNoneMatch, ifNoneMatch.matches(current.version) {
                return .json(412, .object(currentFields), version: current.version)
            }
            // The same content again changes nothing, and keeps its version.
            if currentFields == fields { return .json(200, .object(currentFields), version: current.version) }
        } else if push.ifMatch != nil {
            // The client changed an entity this server no longer has: a conflict with a deletion.
            return .json(404, .null)
        }
        let version = try nextPosition()
        let entity = StoredEntity(fields: fields, version: version, partitionKey: partitionKey)
        try store.store(entity, kind, id: id)
        try refreshStatistics(of: [current.flatMap(kind.statisticsDay(of:)), kind.statisticsDay(of: entity)])
        return .json(current == nil ? 201 : 200, .object(fields), version: version)
    }

    private func delete(_ kind: CollectionKind, _ push: Push) throws -> APIResponse {
        guard let current = try store.entity(kind, id: push.id), let currentFields = current.fields else { return .json(404, .null) }
        if let ifMatch = push.ifMatch, !ifMatch.matches(current.version) { return .json(412, .object(currentFields), version: current.version) }
        if let ifNoneMatch = push.ifNoneMatch, ifNoneMatch.matches(current.version) {
            return .json(412, .object(currentFields), version: current.version)
        }
        try remove(current, kind, id: push.id)
        try refreshStatistics(of: [kind.statisticsDay(of: current)])
        return .noContent
    }

    /// Deletes an entity and leaves its tombstone in the feed.
    private func remove(_ entity: StoredEntity, _ kind: CollectionKind, id: String) throws {
        let version = try nextPosition()
        try store.store(StoredEntity(fields: nil, version: version, partitionKey: entity.partitionKey), kind, id: id)
    }

    /// Recomputes the statistics of these days from their todos, as this transaction sees them.
    private func refreshStatistics(of days: [String?]) throws {
        for day in Set(days.compactMap { $0 }).sorted() {
            let todos = try store.todos(onDay: day)
            let current = try store.entity(.dailyStats, id: day)
            guard let stat = DailyStats.compute(day: day, todos: todos) else {
                if let current, current.exists { try remove(current, .dailyStats, id: day) }
                continue
            }
            if current?.fields == stat.fields { continue }
            let version = try nextPosition()
            try store.store(StoredEntity(fields: stat.fields, version: version, partitionKey: stat.partitionKey), .dailyStats, id: day)
        }
    }

    // MARK: Positions

    private func nextPosition() throws -> Int64 {
        let next = try currentPosition() + 1
        position = next
        positionMoved = true
        return next
    }

    private func currentPosition() throws -> Int64 {
        if let position { return position }
        let stored = try store.lastPosition()
        position = stored
        return stored
    }
}
