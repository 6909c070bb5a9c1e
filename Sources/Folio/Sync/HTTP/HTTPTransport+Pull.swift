internal import Foundation

/// Pulling: `GET {base}/{collection}?partition=…` and `GET {base}/{collection}?since=…`.
extension HTTPTransport {
    /// Fetches a partition (`GET {base}/{collection}?partition=…`) or the changes since a cursor
    /// (`?since=…`), checking the answer as untrusted input.
    /// - Parameter request: The collection, and the partition or the cursor.
    /// - Returns: The server's entities or changes; ``PullResponse/notServed(_:)`` when the server
    ///   answers 404 (it does not serve the collection) or 501 to `?since=` (it has no change feed).
    /// - Throws: ``FolioError`` with ``FolioError/Code/network`` (no answer, or 408, 425, 429,
    ///   5xx), ``FolioError/Code/unauthorized`` (401), or ``FolioError/Code/badResponse`` (an
    ///   answer that is not the protocol's JSON, too large, redirected, or another status).
    public func pull(_ request: PullRequest) async throws -> PullResponse {
        // The first page asks `since=` (empty): a request with neither parameter is an error.
        let query =
            request.partition.map { URLQueryItem(name: "partition", value: $0) }
            ?? URLQueryItem(name: "since", value: request.cursor ?? "")
        let answer = await send(
            method: "GET", path: HTTPHeaders.segment(request.collection), query: [query], headers: ["Accept": "application/json"], body: nil)
        let what = "GET \(request.collection)" + (request.partition.map { "?partition=\($0)" } ?? "?since=")
        switch answer {
        case .unreachable(let reason): throw FolioError(.network, reason)
        case .unauthorized(let reason): throw FolioError(.unauthorized, reason)
        case .tooLarge(_, let limit): throw FolioError(.badResponse, "the answer to \(what) is larger than the \(limit)-byte limit")
        case .redirected(let reason): throw FolioError(.badResponse, "\(what): \(reason)")
        case .response(let status, _, let body):
            if status == 404 {
                return .notServed("the server does not serve \(request.collection) (404 to \(what))")
            }
            if status == 501 && request.partition == nil {
                return .notServed("the server has no change feed for \(request.collection) (501 to \(what))")
            }
            switch HTTPResponseClass(status: status) {
            case .success: return try Self.pullResponse(body, what: what, isPartition: request.partition != nil)
            case .unauthorized:
                throw FolioError(.unauthorized, "the server answered 401 to \(what)" + (auth == nil ? " and the app gave no auth provider" : ""))
            case .transient: throw FolioError(.network, "the server answered \(status) to \(what)")
            default:
                throw FolioError(.badResponse, "the server answered \(status) to \(what): \(HTTPHeaders.excerpt(body, limit: 300))")
            }
        }
    }

    /// Reads a pull's body, naming the field when it is not what PROTOCOL.md says.
    static func pullResponse(_ body: Data, what: String, isPartition: Bool) throws(FolioError) -> PullResponse {
        let json = try parse(body, what: "the answer to \(what)")
        func bad(_ why: String) -> FolioError { FolioError(.badResponse, "the answer to \(what): \(why)") }
        let key = isPartition ? "entities" : "changes"
        guard case .array(let list)? = json[key] else { throw bad("no \"\(key)\" array") }
        var items: [PullResponse.Item] = []
        items.reserveCapacity(list.count)
        // Ids compare as bytes (PROTOCOL.md): two spellings of "café" are two entities.
        var seen = Set<[UInt8]>()
        for (index, item) in list.enumerated() {
            let field = "\(key)[\(index)]"
            guard let id = item["id"]?.stringValue else { throw bad("\(field).id is not a string") }
            if isPartition && !seen.insert(Array(id.utf8)).inserted {
                throw bad("\(field).id \(FolioError.quoted(id)) appears twice; a partition lists each entity once")
            }
            let version: String?
            switch item["version"] {
            case nil, .null?: version = nil
            case .string(let text)?, .number(let text)?: version = text
            default: throw bad("\(field).version is not a string")
            }
            if item["deleted"] == .bool(true) {
                items.append(PullResponse.Item(id: id, version: version, entity: nil))
                continue
            }
            guard let entity = item["entity"], entity.objectValue != nil else { throw bad("\(field).entity is not a JSON object") }
            items.append(PullResponse.Item(id: id, version: version, entity: Data(JSONWriter.compact(entity))))
        }
        if isPartition { return PullResponse(items: items) }
        guard let cursor = json["cursor"]?.stringValue ?? json["cursor"]?.integerValue.map(String.init) else {
            throw bad("no \"cursor\" string")
        }
        return PullResponse(items: items, cursor: cursor, hasMore: json["hasMore"] == .bool(true))
    }
}
