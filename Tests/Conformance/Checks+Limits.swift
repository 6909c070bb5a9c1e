import Foundation

/// Limits: a body over the server's limit is refused with 413 at once, without reading it.
extension ConformanceSuite {
    static let limitChecks: [Check] = [
        Check("body-too-large", "a Content-Length of 100 MB is answered 413 at once and the connection closed, without sending the body") { context in
            let collection = context.collection
            let id = context.newID()
            let connection = try context.client.connect()
            defer { connection.close() }
            let start = Date()
            var head = "PUT \(context.client.basePath)\(context.path(collection.name, id)) HTTP/1.1\r\nHost: \(context.client.host):\(context.client.port)\r\n"
            for (name, value) in context.authorization { head += "\(name): \(value)\r\n" }
            head += "Content-Type: application/json\r\nContent-Length: 100000000\r\nIf-None-Match: *\r\nIdempotency-Key: \(context.newKey())\r\n\r\n"
            try connection.write(Data((head + "{\"id\":" + JSON.quote(id) + ",").utf8))
            let answer: RawResponse
            do {
                answer = try connection.readResponse()
            } catch {
                throw CheckFailure("no answer to a 100 MB Content-Length after \(Int(Date().timeIntervalSince(start))) s with 1 KB sent: \(error)")
            }
            try context.expect(answer, [413], "a PUT announcing 100 MB")
            let end = connection.closesWithinDeadline()
            guard end.closed else {
                throw CheckFailure("after its 413 the server kept the connection open, waiting for the body it refused")
            }
            guard end.extraBytes == 0 else { throw CheckFailure("after its 413 the server sent \(end.extraBytes) more bytes (another answer?)") }
        }
    ]
}
