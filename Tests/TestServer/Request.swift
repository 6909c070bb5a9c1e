public import Foundation

/// A request as the server's routing, the fault matchers and ``TestServer/permanentRejection``
/// see it: a whole HTTP request, or one request inside a batch (``inBatch``).
public struct Request: Sendable, CustomStringConvertible {
    /// `GET`, `PUT`, `DELETE`, `POST`.
    public var method: String
    /// The percent-decoded path segments after `/api/`: `["todos", "a/b"]` for
    /// `/api/todos/a%2Fb`, `["_commands", "archive"]`, `["_batch"]`. Empty for a path outside `/api/`.
    public var path: [String]
    /// The path as sent, percent-encoded, relative to `/api/` (for a batch item, its `path`).
    public var rawPath: String
    /// The percent-decoded query items (`+` is kept as is); the last one wins for a repeated name.
    public var query: [String: String]
    /// The headers, with lowercased names.
    public var headers: [String: String]
    /// The body as received (for a batch item, its `body` value's bytes as they were in the batch).
    public var body: Data
    /// Whether this is one of the requests inside a `POST /api/_batch`.
    public var inBatch: Bool

    /// Creates a request (for tests of matchers; the server builds its own).
    public init(
        method: String, path: [String], rawPath: String? = nil, query: [String: String] = [:],
        headers: [String: String] = [:], body: Data = Data(), inBatch: Bool = false
    ) {
        self.method = method
        self.path = path
        self.rawPath = rawPath ?? path.map(Request.encodeSegment).joined(separator: "/")
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
        self.inBatch = inBatch
    }

    /// A header's value, by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The first path segment: the collection (or `_commands`, `_batch`).
    public var collection: String? { path.first }

    /// The second path segment: the entity id (or the custom command's name).
    public var id: String? { path.count > 1 ? path[1] : nil }

    /// The `Idempotency-Key` header.
    public var idempotencyKey: String? { header("Idempotency-Key") }

    /// Whether this is a push (`PUT`, `DELETE`, `POST`), as opposed to a pull.
    public var isPush: Bool { method == "PUT" || method == "DELETE" || method == "POST" }

    /// Whether this is a `POST /api/_batch`.
    public var isBatch: Bool { method == "POST" && path == ["_batch"] }

    public var description: String { "\(method) /api/\(rawPath)\(inBatch ? " (in batch)" : "")" }

    /// Percent-encodes one path segment as the protocol does: every byte outside
    /// `A–Z a–z 0–9 - . _ ~` is encoded.
    public static func encodeSegment(_ segment: String) -> String {
        var result = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += hex.count == 1 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return result
    }

    /// Decodes `%XX` escapes; `nil` when an escape is malformed or the bytes are not UTF-8.
    static func decodePercent<S: StringProtocol>(_ text: S) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(bytes: bytes, encoding: .utf8)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Splits `target` (an HTTP request target, or a batch item's path relative to the base)
    /// into decoded segments and query items. `nil` when an escape is malformed.
    static func parseTarget(_ target: String, relativeToBase: Bool) -> (rawPath: String, path: [String], query: [String: String])? {
        var target = Substring(target)
        // Absolute form: http://host:port/api/…
        if target.hasPrefix("http://") || target.hasPrefix("https://") {
            let afterScheme = target[target.index(target.firstIndex(of: ":")!, offsetBy: 3)...]
            target = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
        }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var rawPath = parts[0]
        var query: [String: String] = [:]
        if parts.count > 1 {
            for item in parts[1].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = decodePercent(pair[0]), let value = decodePercent(pair.count > 1 ? pair[1] : "") else { return nil }
                query[name] = value
            }
        }
        if !relativeToBase {
            guard rawPath.hasPrefix("/api/") else { return (String(rawPath), [], query) }
            rawPath = rawPath.dropFirst("/api/".count)
        }
        var path: [String] = []
        for segment in rawPath.split(separator: "/", omittingEmptySubsequences: false) {
            guard let decoded = decodePercent(segment) else { return nil }
            path.append(decoded)
        }
        if path == [""] { path = [] }
        return (String(rawPath), path, query)
    }
}

extension Request {
    /// What an idempotency key is compared on: the method, the decoded path, and the body as a
    /// JSON value (``RawJSON/canonical(in:)``; a body that is not JSON by its bytes).
    var fingerprint: String {
        let path = self.path.map(Request.encodeSegment).joined(separator: "/")
        let bytes = [UInt8](body)
        let canonical: String
        do {
            canonical = try RawJSON.parse(bytes).canonical(in: bytes)
        } catch {
            canonical = "bytes:" + body.base64EncodedString()
        }
        return "\(method) \(path)\n\(canonical)"
    }
}
