/// A request the server refuses: the HTTP status, what is wrong, and the field at fault.
///
/// Its response body is `{"error": "<message>", "field": "<field>", "status": <status>}`.
struct RequestError: Error, Sendable, Equatable {
    var status: Int
    var message: String
    /// The member of the body (`title`, `requests[2].path`), the header (`If-Match`), the query
    /// item (`since`) or the path part (`id`, `collection`) at fault, if one is.
    var field: String?
    /// Headers the answer needs (`Allow` with a 405, `WWW-Authenticate` with a 401).
    var headers: [String: String]

    init(_ status: Int, _ message: String, field: String? = nil, headers: [String: String] = [:]) {
        self.status = status
        self.message = message
        self.field = field
        self.headers = headers
    }

    /// The error as a response.
    var response: APIResponse {
        var response = APIResponse.error(status, message, field: field)
        response.headers.merge(headers) { _, own in own }
        return response
    }
}
