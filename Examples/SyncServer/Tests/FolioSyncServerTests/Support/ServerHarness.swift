import Foundation
@testable import FolioSyncServer
import Testing

/// A server on a free port of 127.0.0.1 with its data in a temp folder, and a client for it.
struct Harness: Sendable {
    let folder: TemporaryFolder
    let server: SyncServer
    let client: HTTPClient

    /// Starts a server; `configure` adjusts its configuration.
    static func start(_ configure: (inout SyncServer.Configuration) -> Void = { _ in }) async throws -> Harness {
        let folder = try TemporaryFolder()
        return try await start(in: folder, configure)
    }

    /// Starts a server on a storage: a new data folder, or a new PostgreSQL database.
    static func start(on storage: TestStorage, _ configure: (inout SyncServer.Configuration) -> Void = { _ in }) async throws -> Harness {
        let folder = try TemporaryFolder()
        guard storage == .postgres else { return try await start(in: folder, configure) }
        let settings = try await TestPostgres.shared.database()
        return try await start(in: folder) { configuration in
            configuration.postgres = settings
            configure(&configuration)
        }
    }

    /// Starts a server on an existing data folder (a restart).
    static func start(in folder: TemporaryFolder, _ configure: (inout SyncServer.Configuration) -> Void = { _ in }) async throws -> Harness {
        var configuration = SyncServer.Configuration(dataFolder: folder.url)
        configuration.port = 0
        configure(&configuration)
        let server = try await SyncServer.start(configuration)
        return Harness(folder: folder, server: server, client: HTTPClient(baseURL: server.baseURL))
    }

    func stop() async throws { try await server.stop() }

    /// `PUT /api/todos/<id>` with a key and a precondition.
    func putTodo(_ todo: [String: Any], key: String? = nil, ifMatch: String? = nil, create: Bool = false) async throws -> Answer {
        var headers: [String: String] = [:]
        if let key { headers["Idempotency-Key"] = key }
        if let ifMatch { headers["If-Match"] = ifMatch }
        if create { headers["If-None-Match"] = "*" }
        let id = todo["id"] as? String ?? ""
        return try await client.send("PUT", "/api/todos/\(id)", headers: headers, json: todo)
    }

    /// `DELETE /api/<collection>/<id>`.
    func delete(_ collection: String, _ id: String, key: String? = nil, ifMatch: String? = nil) async throws -> Answer {
        var headers: [String: String] = [:]
        if let key { headers["Idempotency-Key"] = key }
        if let ifMatch { headers["If-Match"] = ifMatch }
        return try await client.send("DELETE", "/api/\(collection)/\(id)", headers: headers)
    }

    /// The entities of a partition pull, by id.
    func partition(_ collection: String, _ key: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: [String: Any]] {
        let answer = try await client.get("/api/\(collection)?partition=\(key)")
        #expect(answer.status == 200, "\(answer.text)", sourceLocation: sourceLocation)
        var result: [String: [String: Any]] = [:]
        for item in answer.object["entities"] as? [[String: Any]] ?? [] {
            if let id = item["id"] as? String { result[id] = item }
        }
        return result
    }
}

/// A todo as the TyTE app sends it.
func todoJSON(
    _ id: String = UUID().uuidString, title: String = "Buy milk", date: String = "2026-11-22", done: Bool = false,
    priority: Int = 1, tagID: String? = nil
) -> [String: Any] {
    var todo: [String: Any] = [
        "id": id, "title": title, "date": date, "done": done, "priority": priority,
        "createdAt": "2026-11-22T09:30:00.000Z", "updatedAt": "2026-11-22T09:30:00.000Z",
    ]
    if let tagID { todo["tagID"] = tagID }
    return todo
}

/// A fresh idempotency key in Folio's form.
func newKey() -> String { "\(UUID().uuidString)-\(String(repeating: "0", count: 19))1" }
