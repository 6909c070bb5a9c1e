import Foundation
@testable import FolioSyncServer
import Testing

/// Bad requests get a 4xx naming what is wrong, and change nothing.
@Suite struct BadInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var change: @Sendable ([String: Any]) -> [String: Any]
        var field: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "priority out of range",
            change: {
                var t = $0; t["priority"] = 4; return t
            }, field: "priority"),
        Case(
            name: "priority as a string",
            change: {
                var t = $0; t["priority"] = "high"; return t
            }, field: "priority"),
        Case(
            name: "priority as a fraction",
            change: {
                var t = $0; t["priority"] = 1.5; return t
            }, field: "priority"),
        Case(
            name: "done as a string",
            change: {
                var t = $0; t["done"] = "yes"; return t
            }, field: "done"),
        Case(
            name: "title missing",
            change: {
                var t = $0; t["title"] = nil; return t
            }, field: "title"),
        Case(
            name: "title a number",
            change: {
                var t = $0; t["title"] = 7; return t
            }, field: "title"),
        Case(
            name: "date not a day",
            change: {
                var t = $0; t["date"] = "2026-13-01"; return t
            }, field: "date"),
        Case(
            name: "date a path",
            change: {
                var t = $0; t["date"] = "../../etc"; return t
            }, field: "date"),
        Case(
            name: "tagID a number",
            change: {
                var t = $0; t["tagID"] = 3; return t
            }, field: "tagID"),
        Case(
            name: "tagID with a slash",
            change: {
                var t = $0; t["tagID"] = "a/b"; return t
            }, field: "tagID"),
        Case(
            name: "createdAt not a date",
            change: {
                var t = $0; t["createdAt"] = "yesterday"; return t
            }, field: "createdAt"),
        Case(
            name: "updatedAt missing",
            change: {
                var t = $0; t["updatedAt"] = nil; return t
            }, field: "updatedAt"),
        Case(
            name: "id differs from the URL's",
            change: {
                var t = $0; t["id"] = UUID().uuidString; return t
            }, field: "id"),
    ]

    @Test(arguments: cases)
    func aTodoWithABadFieldIsRefused(_ badCase: Case) async throws {
        let harness = try await Harness.start()
        let todo = todoJSON()
        let id = todo["id"] as? String ?? ""
        let answer = try await harness.client.send("PUT", "/api/todos/\(id)", headers: ["Idempotency-Key": newKey()], json: badCase.change(todo))
        #expect(answer.status == 400, "\(answer.text)")
        #expect(answer.field == badCase.field, "\(answer.text)")
        #expect(answer.headers["content-type"] == "application/json")
        #expect(try await harness.client.get("/api/todos/\(id)").status == 404)
        try await harness.stop()
    }

    @Test func brokenBodiesHostileIdsAndUnknownRoutesAreRefused() async throws {
        let harness = try await Harness.start {
            $0.maxEntityBytes = 1_000; $0.maxBodyBytes = 10_000
        }
        let id = UUID().uuidString
        let client = harness.client
        func expectRefused(_ answer: Answer, _ status: Int, field: String?, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(answer.status == status, "\(answer.text)", sourceLocation: sourceLocation)
            #expect(answer.field == field, "\(answer.text)", sourceLocation: sourceLocation)
            #expect(answer.error?.isEmpty == false, sourceLocation: sourceLocation)
        }
        expectRefused(try await client.send("PUT", "/api/todos/\(id)", body: Data("{\"id\": ".utf8)), 400, field: "body")
        expectRefused(try await client.send("PUT", "/api/todos/\(id)", body: Data("[1, 2]".utf8)), 400, field: "body")
        expectRefused(try await client.send("PUT", "/api/todos/\(id)"), 400, field: "body")
        expectRefused(try await client.send("PUT", "/api/todos/\(id.lowercased())", json: todoJSON(id.lowercased())), 400, field: "id")
        expectRefused(try await client.send("PUT", "/api/tags/%2E%2E", json: ["id": "..", "name": "x", "color": "#000000"]), 400, field: "id")
        expectRefused(try await client.send("PUT", "/api/tags/a%2F..%2Fb", json: ["id": "a/../b", "name": "x", "color": "#000000"]), 400, field: "id")
        expectRefused(try await client.send("PUT", "/api/tags/%00", json: ["id": "\u{0}", "name": "x", "color": "#000000"]), 400, field: "id")
        expectRefused(try await client.send("PUT", "/api/tags/t", json: ["id": "t", "name": "x", "color": "red"]), 400, field: "color")
        expectRefused(
            try await client.send(
                "PUT", "/api/tags/t", headers: ["Idempotency-Key": "has space"],
                json: ["id": "t", "name": "x", "color": "#000000"]), 400, field: "Idempotency-Key")
        expectRefused(
            try await client.send(
                "PUT", "/api/tags/t", headers: ["If-Match": "\"\""],
                json: ["id": "t", "name": "x", "color": "#000000"]), 400, field: "If-Match")
        let big = todoJSON(id, title: String(repeating: "x", count: 2_000))
        expectRefused(try await client.send("PUT", "/api/todos/\(id)", json: big), 413, field: "body")
        let huge = Data(repeating: UInt8(ascii: " "), count: 20_000)
        expectRefused(try await client.send("PUT", "/api/todos/\(id)", body: huge), 413, field: "body")
        expectRefused(try await client.send("PUT", "/api/notes/1", json: [:]), 404, field: "collection")
        expectRefused(try await client.get("/api/notes?partition=2026-11-22"), 404, field: "collection")
        expectRefused(try await client.send("POST", "/api/_commands/archive", json: [:]), 404, field: "name")
        expectRefused(try await client.send("PATCH", "/api/todos/\(id)", json: [:]), 405, field: "method")
        expectRefused(try await client.send("POST", "/api/todos", json: [:]), 405, field: "method")
        expectRefused(try await client.get("/api/todos/\(id)/extra"), 404, field: "path")
        expectRefused(try await client.get("/elsewhere"), 404, field: "path")

        // Nothing was stored, and the server still works.
        #expect(try await harness.partition("tags", "").isEmpty)
        #expect((try await client.get("/api/todos?since=").object["changes"] as? [Any])?.isEmpty == true)
        #expect(try await harness.putTodo(todoJSON(id), key: newKey()).status == 201)
        try await harness.stop()
    }

    @Test func malformedPercentEscapesAreRefused() throws {
        // URLSession would fix such a URL before sending it, so the parser is tested directly.
        #expect(throws: RequestError.self) { try APIRequest.parseTarget("/api/tags/x%ZZ", relativeToBase: false) }
        #expect(throws: RequestError.self) { try APIRequest.parseTarget("/api/tags/%FF", relativeToBase: false) }
        #expect(throws: RequestError.self) { try APIRequest.parseTarget("todos?since=%", relativeToBase: true) }
        let parsed = try APIRequest.parseTarget("/api/tags/a%2Fb?partition=", relativeToBase: false)
        #expect(parsed?.path == ["tags", "a/b"])
        #expect(parsed?.query == ["partition": ""])
        #expect(try APIRequest.parseTarget("/other", relativeToBase: false) == nil)
    }

    @Test func aTokenIsRequiredWhenSet() async throws {
        let harness = try await Harness.start { $0.token = "s3cret" }
        let missing = try await harness.client.get("/api/todos?since=")
        #expect(missing.status == 401)
        #expect(missing.headers["www-authenticate"] == "Bearer")
        #expect(try await harness.client.send("GET", "/api/todos?since=", headers: ["Authorization": "Bearer wrong"]).status == 401)
        #expect(try await harness.client.send("GET", "/api/todos?since=", headers: ["Authorization": "Bearer s3cret"]).status == 200)
        try await harness.stop()
    }
}
