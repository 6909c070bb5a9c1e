import Foundation

/// A request of the protocol: a whole HTTP request under `/api/`, or one request inside a batch.
struct APIRequest: Sendable {
    /// `GET`, `PUT`, `DELETE`, `POST`.
    var method: String
    /// The percent-decoded path segments after `/api/`: `["todos", "8C0F…"]`, `["_batch"]`.
    var path: [String]
    /// The path as sent, relative to `/api/` (for error messages and the idempotency memory).
    var rawPath: String
    /// The percent-decoded query items; a repeated name keeps its last value.
    var query: [String: String]
    /// The headers, by lowercased name.
    var headers: [String: String]
    /// The body as received (for a batch item, its `body` as JSON).
    var body: Data
    /// A batch item's body, already parsed as part of the batch (``body`` then holds it compacted).
    var jsonBody: JSONValue?

    /// A header by case-insensitive name.
    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// Splits an HTTP request target (`/api/todos/a%2Fb?partition=2026-11-21`) or a batch item's
    /// path (`todos/a%2Fb`, relative to `/api/`) into decoded segments and query items.
    /// - Returns: nil for a target outside `/api/`.
    /// - Throws: ``RequestError`` (400) for a malformed percent-escape or bytes that are not UTF-8.
    static func parseTarget(_ target: String, relativeToBase: Bool, field: String = "path") throws(RequestError)
        -> (rawPath: String, path: [String], query: [String: String])?
    {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var rawPath = parts.first ?? ""
        var query: [String: String] = [:]
        if parts.count > 1 {
            for item in parts[1].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = try decode(pair[0], field: "query")
                query[name] = try decode(pair.count > 1 ? pair[1] : "", field: name)
            }
        }
        if !relativeToBase {
            guard rawPath.hasPrefix("/api/") else { return nil }
            rawPath = rawPath.dropFirst("/api/".count)
        }
        var path: [String] = []
        for segment in rawPath.split(separator: "/", omittingEmptySubsequences: false) {
            path.append(try decode(segment, field: field))
        }
        if path == [""] { path = [] }
        return (String(rawPath), path, query)
    }

    /// Decodes `%XX` escapes (`+` stays a plus: the protocol escapes spaces as `%20`).
    private static func decode(_ text: Substring, field: String) throws(RequestError) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw RequestError(400, "malformed percent-escape in \"\(text)\"", field: field)
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw RequestError(400, "\"\(text)\" does not decode to UTF-8", field: field)
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
