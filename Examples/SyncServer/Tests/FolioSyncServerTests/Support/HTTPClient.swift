import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// An answer from the server: status, headers (lowercased names) and body.
struct Answer: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data

    /// The body parsed (fragments allowed); nil when it is empty or not JSON.
    var json: Any? {
        guard !body.isEmpty else { return nil }
        do { return try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) } catch { return nil }
    }

    var object: [String: Any] { json as? [String: Any] ?? [:] }
    var etag: String? { headers["etag"] }
    /// The `field` of an error body.
    var field: String? { object["field"] as? String }
    var error: String? { object["error"] as? String }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Plain HTTP requests to a server on 127.0.0.1, with URLSession (no connection reuse surprises:
/// an ephemeral session with no cache).
struct HTTPClient: Sendable {
    let baseURL: URL
    let session: URLSession

    init(baseURL: URL) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    /// Sends a request; `path` is relative to the server's root (`/api/todos/…`), already escaped.
    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil) async throws -> Answer {
        guard let url = URL(string: path, relativeTo: baseURL) else { throw URLError(.badURL) }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return Answer(status: http.statusCode, headers: fields, body: data)
    }

    func send(_ method: String, _ path: String, headers: [String: String] = [:], json: Any) async throws -> Answer {
        try await send(method, path, headers: headers, body: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]))
    }

    func get(_ path: String) async throws -> Answer { try await send("GET", path) }
}
