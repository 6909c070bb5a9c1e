import Foundation

/// `POST {base}/_batch`: `{"requests": [{"method", "path", "headers"?, "body"?}, …]}`.
enum BatchParser {
    /// The most requests one batch may hold.
    static let maxRequests = 1_000

    /// The batch's items, each parsed as a push or the error it answers with.
    /// - Throws: ``RequestError`` (400) when the batch itself is malformed.
    static func items(of body: Data, parser: PushParser) throws(RequestError) -> [Result<Push, RequestError>] {
        guard case .object(let document) = try JSONCoding.parse(body), case .array(let list)? = document["requests"] else {
            throw RequestError(400, "a batch is {\"requests\": [{\"method\", \"path\", \"headers\", \"body\"}, …]}", field: "requests")
        }
        guard list.count <= maxRequests else {
            throw RequestError(413, "a batch holds at most \(maxRequests) requests; this one has \(list.count)", field: "requests")
        }
        var items: [Result<Push, RequestError>] = []
        for (index, element) in list.enumerated() {
            do throws(RequestError) {
                items.append(.success(try parser.push(from: request(element, index: index))))
            } catch {
                items.append(.failure(error))
            }
        }
        return items
    }

    /// One item as a request of its own.
    private static func request(_ element: JSONValue, index: Int) throws(RequestError) -> APIRequest {
        let field = "requests[\(index)]"
        guard case .object(let item) = element else { throw RequestError(400, "\(field) is not an object", field: field) }
        guard let method = item["method"]?.stringValue?.uppercased() else {
            throw RequestError(400, "\(field).method must be a string", field: "\(field).method")
        }
        guard let rawPath = item["path"]?.stringValue, let target = try APIRequest.parseTarget(rawPath, relativeToBase: true, field: "\(field).path") else {
            throw RequestError(400, "\(field).path must be a string", field: "\(field).path")
        }
        guard target.path.first != "_batch", target.query.isEmpty, method != "GET" else {
            throw RequestError(400, "a batch holds only pushes (PUT, DELETE, POST _commands/…), not \(method) \(rawPath)", field: "\(field).path")
        }
        var headers: [String: String] = [:]
        switch item["headers"] {
        case nil, .null?: break
        case .object(let members)?:
            for (name, value) in members {
                guard let text = value.stringValue else {
                    throw RequestError(400, "\(field).headers.\(name) must be a string", field: "\(field).headers.\(name)")
                }
                headers[name.lowercased()] = text
            }
        default:
            throw RequestError(400, "\(field).headers must be an object of strings", field: "\(field).headers")
        }
        var body = Data()
        var jsonBody: JSONValue?
        if let value = item["body"], value != .null {
            jsonBody = value
            do { body = try JSONCoding.data(value) } catch {
                throw RequestError(400, "\(field).body cannot be encoded: \(error)", field: "\(field).body")
            }
        }
        return APIRequest(
            method: method, path: target.path, rawPath: target.rawPath, query: target.query, headers: headers,
            body: body, jsonBody: jsonBody)
    }

    /// `{"responses": [{"status", "headers", "body"?}, …]}`.
    static func response(_ responses: [APIResponse]) -> APIResponse {
        let list: [JSONValue] = responses.map { response in
            var item: JSONObject = [
                "status": .integer(Int64(response.status)),
                "headers": .object(response.headers.mapValues { .string($0) }),
            ]
            if let body = response.body { item["body"] = body }
            return .object(item)
        }
        return .json(200, .object(["responses": .array(list)]))
    }
}
