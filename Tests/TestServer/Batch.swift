import Foundation

/// `POST {base}/_batch`: the requests inside are processed in order, each as if sent alone, and
/// the batch stops after the first that does not succeed (any non-2xx but a 404 or 410 to a
/// `DELETE`, which means already gone).
extension TestServer {
    func batch(_ request: Request) -> Reply {
        let bytes = [UInt8](request.body)
        guard let document = try? RawJSON.parse(bytes), let list = document["requests"], case .array(let elements) = list.value else {
            return .respond(.error(400, "a batch is {\"requests\": [...]}"))
        }
        if let repeated = document.repeatedMember {
            return .respond(.error(400, "the member \(JSONText.quoted(repeated)) appears twice in one object of the batch"))
        }
        var responses: [HTTPResponse] = []
        for element in elements {
            guard let item = Self.batchItem(element, in: bytes) else {
                responses.append(.error(400, "a batch request needs a method, a path, string headers and a JSON body"))
                break
            }
            let fault = faults.take(for: item)
            let reply = withFault(fault, on: item) {
                guard let route = item.path.first, route != "_batch" else {
                    return .respond(.error(400, "a batch cannot hold \(item.method) \(item.rawPath)"))
                }
                return .respond(push(item))
            }
            switch (reply, fault) {
            case (.drop, _):
                return .drop
            case (.respond, .garbage?), (.respond, .oversized?):
                return reply   // a corrupted answer replaces the whole batch's
            case (.respond(let response), _):
                responses.append(response)
            }
            // A DELETE of something already gone is applied (PROTOCOL.md): the batch goes on.
            let last = responses[responses.count - 1]
            if !(last.isSuccess || (item.method == "DELETE" && (last.status == 404 || last.status == 410))) { break }
        }
        return .respond(.json(200, Self.batchResponse(responses)))
    }

    /// One request of a batch: `{"method", "path", "headers"?, "body"?}`.
    private static func batchItem(_ element: RawJSON, in bytes: [UInt8]) -> Request? {
        guard let method = element["method"]?.stringValue?.uppercased(), let rawPath = element["path"]?.stringValue,
            let target = Request.parseTarget(rawPath, relativeToBase: true)
        else { return nil }
        var headers: [String: String] = [:]
        if let headerObject = element["headers"], !headerObject.isNull {
            guard case .object(let members) = headerObject.value else { return nil }
            for (name, value) in members {
                guard let text = value.stringValue else { return nil }
                headers[name.lowercased()] = text
            }
        }
        var body = Data()
        if let value = element["body"], !value.isNull { body = Data(bytes[value.range]) }
        return Request(
            method: method, path: target.path, rawPath: target.rawPath, query: target.query,
            headers: headers, body: body, inBatch: true)
    }

    /// `{"responses":[{"status":200,"headers":{"ETag":"\"4\""},"body":{…}}, …]}`; a body that is
    /// not JSON is sent as a JSON string, an empty one is left out.
    private static func batchResponse(_ responses: [HTTPResponse]) -> Data {
        var json = JSONBuilder()
        json.raw("{\"responses\":[")
        for (index, response) in responses.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"status\":\(response.status),\"headers\":{")
            let headers = response.headers.filter { $0.name.caseInsensitiveCompare("Content-Type") != .orderedSame }
            for (headerIndex, header) in headers.enumerated() {
                if headerIndex > 0 { json.raw(",") }
                json.string(header.name)
                json.raw(":")
                json.string(header.value)
            }
            json.raw("}")
            if !response.body.isEmpty {
                json.raw(",\"body\":")
                if JSONText.isValid(response.body) {
                    json.raw(response.body)
                } else {
                    json.string(String(decoding: response.body, as: UTF8.self))
                }
            }
            json.raw("}")
        }
        json.raw("]}")
        return json.data
    }
}
