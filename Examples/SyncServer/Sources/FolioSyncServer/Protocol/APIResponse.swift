import Foundation

/// A response of the protocol, before it becomes HTTP: a status, a few headers and a JSON body.
///
/// Kept as a value so the idempotency memory can store it and a batch can embed it.
struct APIResponse: Sendable, Equatable {
    var status: Int
    /// Header name to value (`ETag`, `Allow`, `WWW-Authenticate`, `Idempotent-Replayed`).
    var headers: [String: String]
    /// The JSON body; nil for none (`204 No Content`).
    var body: JSONValue?

    init(status: Int, headers: [String: String] = [:], body: JSONValue?) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Whether the status is 2xx.
    var isSuccess: Bool { (200..<300).contains(status) }

    /// A JSON answer, with the entity's version as `ETag` if given.
    static func json(_ status: Int, _ body: JSONValue, version: Int64? = nil) -> APIResponse {
        var headers: [String: String] = [:]
        if let version { headers["ETag"] = etag(version) }
        return APIResponse(status: status, headers: headers, body: body)
    }

    /// `{"error": "…", "field": "…", "status": 400}`.
    static func error(_ status: Int, _ message: String, field: String? = nil) -> APIResponse {
        var body: JSONObject = ["error": .string(message), "status": .integer(Int64(status))]
        if let field { body["field"] = .string(field) }
        return APIResponse(status: status, body: .object(body))
    }

    /// `204 No Content`.
    static let noContent = APIResponse(status: 204, body: nil)

    /// A version as an `ETag` value: `"17"`, quoted.
    static func etag(_ version: Int64) -> String { "\"\(version)\"" }

    /// The body's bytes: compact JSON, or nothing.
    func bodyData() throws -> Data {
        guard let body else { return Data() }
        return try JSONCoding.data(body)
    }
}
