import Foundation

/// Routes protocol requests (PROTOCOL.md) to the database, and turns every failure into a JSON
/// answer: nothing a client sends can crash the server.
struct APIRouter: Sendable {
    let database: SyncDatabase
    let parser: PushParser
    /// The bearer token every request must carry, if one is set.
    let token: String?

    /// Answers one HTTP request.
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - target: The request target, `/api/todos?partition=2026-11-21`.
    ///   - headers: The headers, by lowercased name.
    ///   - body: The body (already bounded by the HTTP layer).
    func respond(method: String, target: String, headers: [String: String], body: Data) async -> APIResponse {
        do {
            guard let parsed = try APIRequest.parseTarget(target, relativeToBase: false) else {
                throw RequestError(404, "no such resource: \(target) (the protocol lives under /api/)", field: "path")
            }
            try authorize(headers)
            let request = APIRequest(method: method, path: parsed.path, rawPath: parsed.rawPath, query: parsed.query,
                                     headers: headers, body: body)
            return try await route(request)
        } catch let error as RequestError {
            return error.response
        } catch {
            return .error(500, "the server could not complete the request: \(error)")
        }
    }

    private func authorize(_ headers: [String: String]) throws(RequestError) {
        guard let token else { return }
        // The scheme name is case-insensitive (RFC 9110 §11.1): `bearer` is `Bearer`.
        let header = (headers["authorization"] ?? "").trimmingCharacters(in: .whitespaces)
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let isBearer = parts.count == 2 && parts[0].lowercased() == "bearer"
        let expected = Array(token.utf8)
        let given = isBearer ? Array(parts[1].trimmingCharacters(in: .whitespaces).utf8) : []
        // Compares every byte, so the time taken does not tell how much of a guess was right.
        var difference = UInt8(isBearer && expected.count == given.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        guard difference == 0 else {
            throw RequestError(401, "a valid \"Authorization: Bearer <token>\" header is required", field: "Authorization",
                               headers: ["WWW-Authenticate": "Bearer"])
        }
    }

    private func route(_ request: APIRequest) async throws -> APIResponse {
        let path = request.path
        switch (path.first, path.count) {
        case ("_batch"?, 1):
            guard request.method == "POST" else { throw RequestError(405, "a batch is sent with POST", field: "method", headers: ["Allow": "POST"]) }
            let items = try BatchParser.items(of: request.body, parser: parser)
            return BatchParser.response(try await database.apply(items))
        case ("_commands"?, 2):
            throw PushParser.unknownCommand(request)
        case (let name?, 1):
            guard let kind = CollectionKind(rawValue: name) else { throw PushParser.unknownCollection(name) }
            guard request.method == "GET" else {
                throw RequestError(405, "a collection is pulled with GET", field: "method", headers: ["Allow": "GET"])
            }
            return try await pull(kind, request)
        case (let name?, 2):
            guard let kind = CollectionKind(rawValue: name) else { throw PushParser.unknownCollection(name) }
            if request.method == "GET" {
                try Names.validateID(path[1])
                return try await database.entity(kind, id: path[1])
            }
            let push = try parser.push(from: request)
            return try await database.apply([.success(push)])[0]
        default:
            throw RequestError(404, "no such resource: /api/\(request.rawPath)", field: "path")
        }
    }

    /// `?partition=` or `?since=` (empty: the feed from the beginning); neither is 400.
    private func pull(_ kind: CollectionKind, _ request: APIRequest) async throws -> APIResponse {
        if let partition = request.query["partition"] {
            guard request.query["since"] == nil else { throw RequestError(400, "give partition= or since=, not both", field: "since") }
            try kind.validatePartition(partition)
            return try await database.partition(kind, key: partition)
        }
        guard let since = request.query["since"] else {
            throw RequestError(400, "a pull names a partition (?partition=KEY, empty for tags) or a cursor (?since=, empty: from the beginning)",
                               field: "query")
        }
        guard let cursor = since.isEmpty ? 0 : Int64(since), cursor >= 0 else {
            throw RequestError(400, "since= is a cursor from an earlier answer (a number), not \(since.debugDescription)", field: "since")
        }
        return try await database.changes(kind, after: cursor)
    }
}
