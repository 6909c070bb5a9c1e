import Foundation

/// Routes protocol requests (PROTOCOL.md) to the storage, on behalf of the owner the request's
/// token names, and turns every failure into a JSON answer: nothing a client sends can crash the
/// server. `GET /health` and `GET /ready` answer without a token.
struct APIRouter: Sendable {
    let storage: any SyncStorage
    let parser: PushParser
    /// Who a bearer token speaks for; empty when requests need no token.
    let tokens: [String: Owner]
    /// The most changes one `?since=` answer holds.
    let pageSize: Int

    /// Answers one HTTP request.
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - target: The request target, `/api/todos?partition=2026-11-21`.
    ///   - headers: The headers, by lowercased name.
    ///   - body: The body (already bounded by the HTTP layer).
    func respond(method: String, target: String, headers: [String: String], body: Data) async -> APIResponse {
        do {
            if method == "GET", let answer = await probe(target) { return answer }
            guard let parsed = try APIRequest.parseTarget(target, relativeToBase: false) else {
                throw RequestError(404, "no such resource: \(target) (the protocol lives under /api/)", field: "path")
            }
            let owner = try authorize(headers)
            let request = APIRequest(
                method: method, path: parsed.path, rawPath: parsed.rawPath, query: parsed.query,
                headers: headers, body: body)
            return try await route(request, for: owner)
        } catch let error as RequestError {
            return error.response
        } catch {
            return .error(500, "the server could not complete the request: \(error)")
        }
    }

    /// `GET /health` (the process answers) and `GET /ready` (its storage answers too), for load
    /// balancers and orchestrators; nil for any other target.
    private func probe(_ target: String) async -> APIResponse? {
        switch target {
        case "/health":
            return .json(200, .object(["status": .string("ok")]))
        case "/ready":
            do {
                try await storage.checkReady()
                return .json(200, .object(["status": .string("ready")]))
            } catch {
                return .error(503, "the storage does not answer", field: "storage")
            }
        default:
            return nil
        }
    }

    /// The owner a request speaks for: the one its bearer token maps to.
    private func authorize(_ headers: [String: String]) throws(RequestError) -> Owner {
        guard !tokens.isEmpty else { return .shared }
        // The scheme name is case-insensitive (RFC 9110 §11.1): `bearer` is `Bearer`.
        let header = (headers["authorization"] ?? "").trimmingCharacters(in: .whitespaces)
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let isBearer = parts.count == 2 && parts[0].lowercased() == "bearer"
        let given = isBearer ? Array(parts[1].trimmingCharacters(in: .whitespaces).utf8) : []
        // Compares every byte of every token, so the time taken tells nothing about a guess.
        var owner: Owner?
        for (token, candidate) in tokens where Self.sameBytes(Array(token.utf8), given) && isBearer { owner = candidate }
        guard let owner else {
            throw RequestError(
                401, "a valid \"Authorization: Bearer <token>\" header is required", field: "Authorization",
                headers: ["WWW-Authenticate": "Bearer"])
        }
        return owner
    }

    /// Compares in a time that depends only on the expected token's length.
    private static func sameBytes(_ expected: [UInt8], _ given: [UInt8]) -> Bool {
        var difference = UInt8(expected.count == given.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }

    private func route(_ request: APIRequest, for owner: Owner) async throws -> APIResponse {
        let path = request.path
        switch (path.first, path.count) {
        case ("_batch"?, 1):
            guard request.method == "POST" else { throw RequestError(405, "a batch is sent with POST", field: "method", headers: ["Allow": "POST"]) }
            let items = try BatchParser.items(of: request.body, parser: parser)
            return BatchParser.response(try await storage.apply(items, for: owner, now: Date()))
        case ("_commands"?, 2):
            throw PushParser.unknownCommand(request)
        case (let name?, 1):
            guard let kind = CollectionKind(rawValue: name) else { throw PushParser.unknownCollection(name) }
            guard request.method == "GET" else {
                throw RequestError(405, "a collection is pulled with GET", field: "method", headers: ["Allow": "GET"])
            }
            return try await pull(kind, request, for: owner)
        case (let name?, 2):
            guard let kind = CollectionKind(rawValue: name) else { throw PushParser.unknownCollection(name) }
            if request.method == "GET" {
                try Names.validateID(path[1])
                return try await storage.entity(kind, id: path[1], for: owner)
            }
            let push = try parser.push(from: request)
            return try await storage.apply([.success(push)], for: owner, now: Date())[0]
        default:
            throw RequestError(404, "no such resource: /api/\(request.rawPath)", field: "path")
        }
    }

    /// `?partition=` or `?since=` (empty: the feed from the beginning); neither is 400.
    private func pull(_ kind: CollectionKind, _ request: APIRequest, for owner: Owner) async throws -> APIResponse {
        if let partition = request.query["partition"] {
            guard request.query["since"] == nil else { throw RequestError(400, "give partition= or since=, not both", field: "since") }
            try kind.validatePartition(partition)
            return try await storage.partition(kind, key: partition, for: owner)
        }
        guard let since = request.query["since"] else {
            throw RequestError(
                400, "a pull names a partition (?partition=KEY, empty for tags) or a cursor (?since=, empty: from the beginning)",
                field: "query")
        }
        guard let cursor = since.isEmpty ? 0 : Int64(since), cursor >= 0 else {
            throw RequestError(400, "since= is a cursor from an earlier answer (a number), not \(since.debugDescription)", field: "since")
        }
        return try await storage.changes(kind, after: cursor, pageSize: pageSize, for: owner)
    }
}
