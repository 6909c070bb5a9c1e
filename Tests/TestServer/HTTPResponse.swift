import Foundation

/// One response header.
struct HTTPHeader: Sendable, Equatable {
    var name: String
    var value: String
}

/// An HTTP response. Serialized with a `Content-Length` (except 1xx and 204, which have no body
/// by definition) and a `Connection` header.
struct HTTPResponse: Sendable, Equatable {
    var status: Int
    var headers: [HTTPHeader] = []
    var body = Data()

    /// The value of a header, by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    var isSuccess: Bool { (200..<300).contains(status) }

    /// The bytes on the wire.
    func serialized(keepAlive: Bool) -> Data {
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reason(for: status))\r\n"
        for header in headers { head += "\(header.name): \(header.value)\r\n" }
        if status >= 200 && status != 204 { head += "Content-Length: \(body.count)\r\n" }
        head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        var data = Data(head.utf8)
        if status >= 200 && status != 204 { data.append(body) }
        return data
    }

    /// A JSON response, with an `ETag` for `version` when given.
    static func json(_ status: Int, _ body: Data, version: String? = nil) -> HTTPResponse {
        var response = HTTPResponse(status: status, headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: body)
        if let version { response.headers.append(HTTPHeader(name: "ETag", value: "\"\(version)\"")) }
        return response
    }

    /// `{"error": message}` with that status.
    static func error(_ status: Int, _ message: String) -> HTTPResponse {
        json(status, Data("{\"error\":\(JSONText.quoted(message))}".utf8))
    }

    /// The start of a response that announces a body and then never sends it: what a dropped
    /// connection looks like to the client. (A connection closed without a single byte would be
    /// retried silently by the HTTP client when it was a reused keep-alive connection, which is
    /// not what the tests want to see.)
    static let truncated = Data("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n\r\n{\"dropped".utf8)

    static func reason(for status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 422: return "Unprocessable Content"
        case 425: return "Too Early"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status \(status)"
        }
    }
}

/// Helpers to assemble JSON text around bytes kept as received.
enum JSONText {
    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Whether `data` is one JSON value (of any kind).
    static func isValid(_ data: Data) -> Bool {
        guard !data.isEmpty else { return false }
        return (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
    }
}

/// Builds a JSON document by appending raw pieces: keeps stored entity bytes as they are.
struct JSONBuilder {
    private(set) var data = Data()

    mutating func raw(_ text: String) { data.append(contentsOf: text.utf8) }

    mutating func raw(_ bytes: Data) { data.append(bytes) }

    mutating func string(_ text: String) { raw(JSONText.quoted(text)) }
}
