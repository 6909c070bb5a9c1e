internal import Foundation

/// The body of `POST {base}/_batch` (PROTOCOL.md, "Batches"), built from the commands' bytes.
extension HTTPTransport {
    /// `{"requests":[{"body":…,"headers":{…},"method":"PUT","path":"todos/t1"},…]}`, compact.
    ///
    /// A body that is the command's own (``OutboxCommand/body``, written by Folio's JSON writer
    /// from the parsed command file) is copied in as it is: it is valid compact JSON by
    /// construction, so parsing and writing it again (once per command per batch) would only cost
    /// time. Any other body (a merge, or one a custom caller made) is parsed first, so a body that
    /// is not JSON fails here, naming it, and never makes the whole batch unreadable.
    /// - Throws: ``FolioError/Code/badResponse`` if a body that is not the command's own is not JSON.
    static func batchBody(_ requests: [PushRequest]) throws(FolioError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(requests.reduce(64) { $0 + 160 + ($1.body?.count ?? 0) })
        out.append(contentsOf: Array(#"{"requests":["#.utf8))
        for (index, request) in requests.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            let (method, path) = route(request.command)
            // The members other than the body, written (sorted) by the JSON writer; the body goes
            // in before the closing brace.
            let members: [String: JSONValue] = [
                "method": .string(method), "path": .string(path),
                "headers": .object(pushHeaders(request).mapValues { .string($0) }),
            ]
            var item = JSONWriter.compact(.object(members))
            if let body = request.body {
                item.removeLast()
                item.append(contentsOf: Array(#","body":"#.utf8))
                if body == request.command.body {
                    item.append(contentsOf: body)
                } else {
                    item.append(contentsOf: JSONWriter.compact(try parse(body, what: "a command's body")))
                }
                item.append(UInt8(ascii: "}"))
            }
            out.append(contentsOf: item)
        }
        out.append(contentsOf: Array("]}".utf8))
        return out
    }
}
