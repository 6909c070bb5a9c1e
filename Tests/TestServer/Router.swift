import Foundation

/// Routing and the protocol's handlers: pushes (`PUT`, `DELETE`, custom commands) with
/// idempotency and preconditions, and pulls (by partition, by cursor).
extension TestServer {
    /// Handles one HTTP request: counts it, checks the token, applies a fault, routes it.
    func reply(to message: HTTPRequestMessage) -> Reply {
        guard let target = Request.parseTarget(message.target, relativeToBase: false) else {
            noteRequest(Request(method: message.method, path: [], rawPath: message.target, headers: message.headers, body: message.body))
            return .respond(.error(400, "malformed percent-encoding in \(message.target)"))
        }
        let request = Request(
            method: message.method, path: target.path, rawPath: target.rawPath, query: target.query,
            headers: message.headers, body: message.body)
        noteRequest(request)
        if let token = requiredToken, !Self.authorizes(request.header("Authorization"), token: token) {
            var response = HTTPResponse.error(401, "unauthorized")
            response.headers.append(HTTPHeader(name: "WWW-Authenticate", value: "Bearer"))
            return .respond(response)
        }
        let fault = faults.take(for: request) ?? (request.isPush ? faults.takeRandom() : nil)
        return withFault(fault, on: request) { route(request) }
    }

    /// Runs `handle` as `fault` says.
    func withFault(_ fault: Fault?, on request: Request, _ handle: () -> Reply) -> Reply {
        switch fault {
        case nil:
            return handle()
        case .dropBeforeApplying:
            return .drop
        case .dropAfterApplying:
            _ = handle()
            return .drop
        case .status(let status, let retryAfter, let body):
            return .respond(injectedStatus(status, retryAfter: retryAfter, body: body, for: request))
        case .delay(let seconds):
            guard sleep(seconds) else { return .drop }
            return handle()
        case .garbage:
            guard case .respond(let real) = handle() else { return .drop }
            // A garbled body of a successful answer: a refusal stays a refusal (a 200 over a 400
            // would tell the client that a DELETE, whose body it ignores, was applied).
            guard real.isSuccess else { return .respond(real) }
            return .respond(
                HTTPResponse(
                    status: 200,
                    headers: [HTTPHeader(name: "Content-Type", value: "text/html"), HTTPHeader(name: "ETag", value: real.header("ETag") ?? "\"0\"")],
                    body: Data("<html>oops</html>".utf8)))
        case .oversized(let bytes):
            guard case .respond(let real) = handle() else { return .drop }
            var body = Data("{\"x\":\"".utf8)
            body.append(Data(repeating: UInt8(ascii: "a"), count: max(0, bytes - 8)))
            body.append(contentsOf: "\"}".utf8)
            return .respond(.json(200, body, version: nil).with(etag: real.header("ETag") ?? "\"0\""))
        }
    }

    /// Sleeps in small steps; `false` when the server stopped meanwhile.
    private func sleep(_ seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if listener.isStopping { return false }
            Thread.sleep(forTimeInterval: min(0.01, max(0, deadline.timeIntervalSinceNow)))
        }
        return !listener.isStopping
    }

    private func injectedStatus(_ status: Int, retryAfter: String?, body: String?, for request: Request) -> HTTPResponse {
        var response: HTTPResponse
        if let body {
            let data = Data(body.utf8)
            response = HTTPResponse(
                status: status,
                headers: [HTTPHeader(name: "Content-Type", value: JSONText.isValid(data) ? "application/json" : "text/plain")],
                body: data)
        } else {
            switch status {
            case 409, 412:
                if let target = entityTarget(of: request), let current = entity(target.collection, target.id) {
                    response = .json(status, current.json, version: current.version)
                } else {
                    response = .json(status, Data("null".utf8))
                }
            case 404, 410:
                response = .json(status, Data("null".utf8))
            case 100..<200, 204, 304:
                response = HTTPResponse(status: status)
            default:
                response = .error(status, "injected \(status)")
            }
        }
        if let retryAfter { response.headers.append(HTTPHeader(name: "Retry-After", value: retryAfter)) }
        return response
    }

    /// The entity a request is about: the URL's for a `PUT` or `DELETE`, the `Folio-Entity`
    /// header's for a custom command.
    private func entityTarget(of request: Request) -> EntityKey? {
        if request.path.count == 2, !request.path[0].hasPrefix("_") {
            return EntityKey(collection: request.path[0], id: request.path[1])
        }
        if let entity = request.header("Folio-Entity"), let slash = entity.firstIndex(of: "/") {
            return EntityKey(collection: String(entity[..<slash]), id: String(entity[entity.index(after: slash)...]))
        }
        return nil
    }

    /// Dispatches by method and path.
    func route(_ request: Request) -> Reply {
        let path = request.path
        guard let first = path.first else { return .respond(.error(404, "no such resource: \(request.rawPath)")) }
        switch (first, path.count) {
        case ("_batch", 1):
            return request.method == "POST" ? batch(request) : .respond(.error(405, "method not allowed"))
        case ("_commands", 2):
            return .respond(push(request))
        case (_, 1) where !first.hasPrefix("_"):
            guard serves(first) else { return .respond(Self.unserved(first)) }
            return .respond(request.method == "GET" ? pull(request) : .error(405, "method not allowed"))
        case (_, 2) where !first.hasPrefix("_"):
            guard serves(first) else { return .respond(Self.unserved(first)) }
            if request.method == "GET" {
                guard let stored = entity(path[0], path[1]) else { return .respond(.json(404, Data("null".utf8))) }
                return .respond(.json(200, stored.json, version: stored.version))
            }
            return .respond(push(request))
        default:
            return .respond(.error(404, "no such resource: \(request.rawPath)"))
        }
    }

    // MARK: Pushes

    /// Handles one push, alone or inside a batch: replays a remembered key, applies the
    /// permanent rejection, checks the preconditions and applies.
    func push(_ request: Request) -> HTTPResponse {
        let path = request.path
        let isCommand = path.first == "_commands"
        guard path.count == 2, isCommand || !path[0].hasPrefix("_") else { return .error(404, "no such resource: \(request.rawPath)") }
        guard isCommand ? request.method == "POST" : (request.method == "PUT" || request.method == "DELETE") else {
            return .error(405, "method not allowed")
        }
        if !isCommand {
            guard serves(path[0]) else { return Self.unserved(path[0]) }
            if serverComputedCollections.contains(path[0]) {
                var refused = HTTPResponse.error(405, "\(path[0]) is computed by the server: clients pull it, never push it")
                refused.headers.append(HTTPHeader(name: "Allow", value: "GET"))
                return refused
            }
            if let problem = Names.problem(withID: path[1]) { return .error(400, problem) }
        } else if path[1].isEmpty {
            return .error(400, "a custom command needs a name")
        }
        notePush(request)
        let key = request.idempotencyKey
        let fingerprint = request.fingerprint
        if let remembered = store.replay(key, request: fingerprint) { return remembered }
        if let rejection = permanentRejection, rejection(request) { return .error(400, "rejected by test") }
        if let problem = Self.bodyProblem(request, entityID: isCommand ? nil : path[1]) { return .error(400, problem) }

        let (collection, id) = (path[0], path[1])
        let partition = request.header("Folio-Partition")
        let ifMatch = Self.versions(in: request.header("If-Match"))
        let ifNoneMatch = Self.versions(in: request.header("If-None-Match"))
        func change(version: String?) -> AppliedChange {
            AppliedChange(
                key: key, method: request.method, collection: collection, id: id, version: version,
                partition: partition, body: request.body, inBatch: request.inBatch)
        }
        func conflict(_ current: StoredEntity) -> HTTPResponse { .json(412, current.json, version: current.version) }

        switch request.method {
        case "PUT":
            return store.push(key: key, request: fingerprint) { state in
                let current = state.entity(collection, id)
                if let ifMatch {
                    guard let current else { return (.json(404, Data("null".utf8)), nil) }
                    guard ifMatch.contains("*") || ifMatch.contains(current.version) else { return (conflict(current), nil) }
                } else if let ifNoneMatch, let current, ifNoneMatch.contains("*") || ifNoneMatch.contains(current.version) {
                    return (conflict(current), nil)
                }
                let stored = state.store(collection, id, json: request.body, partition: partition ?? "")
                return (.json(current == nil ? 201 : 200, stored.json, version: stored.version), change(version: stored.version))
            }
        case "DELETE":
            return store.push(key: key, request: fingerprint) { state in
                guard let current = state.entity(collection, id) else { return (.json(404, Data("null".utf8)), nil) }
                if let ifMatch, !(ifMatch.contains("*") || ifMatch.contains(current.version)) { return (conflict(current), nil) }
                _ = state.delete(collection, id)
                return (HTTPResponse(status: 204), change(version: nil))
            }
        default:   // a custom command
            return store.push(key: key, request: fingerprint) { _ in (.json(200, Data("{}".utf8)), change(version: nil)) }
        }
    }

    /// The versions of an `If-Match` / `If-None-Match` header: quotes and `W/` stripped; `*` kept.
    static func versions(in header: String?) -> [String]? {
        guard let header else { return nil }
        return header.split(separator: ",").map { item in
            var value = item.trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("W/") { value.removeFirst(2) }
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            return value
        }
    }

    // MARK: Pulls

    /// `GET {collection}?partition=KEY` (the partition's entities) or `GET {collection}?since=N`
    /// (the change feed; no `since`: from the beginning).
    func pull(_ request: Request) -> HTTPResponse {
        let collection = request.path[0]
        var json = JSONBuilder()
        let partitionQuery = request.query["partition"], sinceQuery = request.query["since"]
        if partitionQuery != nil && sinceQuery != nil { return .error(400, "give partition= or since=, not both") }
        if partitionQuery == nil && sinceQuery == nil {
            return .error(
                400, "a pull names a partition (?partition=KEY, empty for an unpartitioned collection) or a cursor (?since=, empty: from the beginning)")
        }
        if let partition = partitionQuery {
            let entities = store.read { $0.entities(in: collection, partition: partition) }
            json.raw("{\"entities\":[")
            for (index, (id, entity)) in entities.enumerated() {
                if index > 0 { json.raw(",") }
                json.raw("{\"id\":")
                json.string(id)
                json.raw(",\"version\":")
                json.string(entity.version)
                json.raw(",\"entity\":")
                json.raw(entity.json)
                json.raw("}")
            }
            json.raw("]}")
            return .json(200, json.data)
        }
        guard servesChangeFeed else { return .error(501, "this server has no change feed: pull \(collection) by partition") }
        let since = sinceQuery ?? ""
        guard let cursor = since.isEmpty ? 0 : Int(since), cursor >= 0 else { return .error(400, "bad cursor \(since)") }
        let pageSize = changePageSize
        let page = store.read { $0.changes(in: collection, after: cursor, limit: pageSize) }
        json.raw("{\"changes\":[")
        for (index, (id, entity)) in page.changes.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"id\":")
            json.string(id)
            if let entity {
                json.raw(",\"version\":")
                json.string(entity.version)
                json.raw(",\"entity\":")
                json.raw(entity.json)
            } else {
                json.raw(",\"deleted\":true")
            }
            json.raw("}")
        }
        json.raw("],\"cursor\":")
        json.string(String(page.cursor))
        json.raw(",\"hasMore\":\(page.hasMore)}")
        return .json(200, json.data)
    }
}

extension HTTPResponse {
    /// This response with its `ETag` replaced.
    func with(etag: String) -> HTTPResponse {
        var copy = self
        copy.headers.removeAll { $0.name.caseInsensitiveCompare("ETag") == .orderedSame }
        copy.headers.append(HTTPHeader(name: "ETag", value: etag))
        return copy
    }
}
