import Foundation

/// Turns a request into a ``Push``, or says precisely what is wrong with it.
struct PushParser: Sendable {
    /// The largest entity a `PUT` may carry, in bytes of JSON.
    var maxEntityBytes: Int

    /// Checks everything a push can be checked for without the stored data: the route, the
    /// method, the id, the headers, and the body against the collection's model.
    /// - Throws: ``RequestError``: 404 for an unknown collection or command, 405 for a method the
    ///   resource does not take, 413 for an oversized entity, 400 for the rest (naming the field).
    func push(from request: APIRequest) throws(RequestError) -> Push {
        guard request.path.count == 2 else { throw RequestError(404, "no such resource: /api/\(request.rawPath)", field: "path") }
        if request.path[0] == "_commands" { throw Self.unknownCommand(request) }
        guard let kind = CollectionKind(rawValue: request.path[0]) else { throw Self.unknownCollection(request.path[0]) }
        let id = request.path[1]
        guard request.method == "PUT" || request.method == "DELETE" else {
            throw RequestError(
                405, "\(request.method) is not allowed on an entity; use GET, PUT or DELETE", field: "method",
                headers: ["Allow": kind.isWritable ? "GET, PUT, DELETE" : "GET"])
        }
        guard kind.isWritable else {
            throw RequestError(
                405, "dailyStats are computed by the server from the todos; clients cannot change them",
                field: "collection", headers: ["Allow": "GET"])
        }
        try Names.validateID(id)
        var push = Push(kind: kind, id: id, change: .delete, method: request.method)
        if let key = request.header("Idempotency-Key") { push.key = (key, try IdempotencyRecord.escape(key)) }
        if let header = request.header("If-Match") { push.ifMatch = try EntityTagList(header, name: "If-Match") }
        if let header = request.header("If-None-Match") { push.ifNoneMatch = try EntityTagList(header, name: "If-None-Match") }
        guard request.method == "PUT" else { return push }

        let body = try entityBody(of: request)
        push.body = body
        switch kind {
        case .todos: push.change = .upsertTodo(try Validation.todo(body, id: id))
        case .tags: push.change = .upsertTag(try Validation.tag(body, id: id))
        case .dailyStats: break   // refused above
        }
        return push
    }

    private func entityBody(of request: APIRequest) throws(RequestError) -> JSONValue {
        let size = request.body.count
        guard size <= maxEntityBytes else {
            throw RequestError(413, "an entity is at most \(maxEntityBytes) bytes of JSON; this one has \(size)", field: "body")
        }
        if let value = request.jsonBody { return value }
        guard !request.body.isEmpty else { throw RequestError(400, "a PUT needs the entity's JSON as its body", field: "body") }
        return try JSONCoding.parse(request.body)
    }

    static func unknownCollection(_ name: String) -> RequestError {
        let known = CollectionKind.allCases.map(\.rawValue).joined(separator: ", ")
        return RequestError(404, "no collection \(name.debugDescription) on this server (it serves \(known))", field: "collection")
    }

    static func unknownCommand(_ request: APIRequest) -> RequestError {
        guard request.method == "POST" else {
            return RequestError(405, "custom commands are sent with POST", field: "method", headers: ["Allow": "POST"])
        }
        let name = request.path.count > 1 ? request.path[1] : ""
        return RequestError(404, "unknown command \(name.debugDescription): this server defines no custom commands", field: "name")
    }
}
