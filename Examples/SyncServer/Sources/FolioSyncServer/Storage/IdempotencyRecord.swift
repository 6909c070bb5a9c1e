import Folio
import Foundation

/// The remembered response to a successful push, by its `Idempotency-Key`:
/// `idempotencyKeys/<YYYY-MM>/<YYYY-MM-DD>.json` (the UTC day it was stored).
///
/// It is written in the same transaction as the change it answers, so a crash can never keep the
/// change and lose the key, or the reverse. Records older than the server's retention
/// (`--remember-days`, 7 by default) are deleted, a whole day file at a time.
struct IdempotencyRecord: Entity {
    static let collection = "idempotencyKeys"
    static let partitioning = Partitioning<IdempotencyRecord>.day(\.date)

    /// The key, escaped to be a valid id (see ``escape(_:)``).
    var id: String
    /// The key as the client sent it.
    var key: String
    /// The UTC day it was stored: its partition, and what expiry looks at.
    var date: String
    var storedAt: Date
    /// The request it answered: a key sent again with another method or path is refused.
    var method: String
    var path: String
    var status: Int
    var headers: [String: String]
    var body: JSONValue?
    /// The request's body as a JSON value (nil for a DELETE, and in records stored before it was
    /// kept): a key sent again with another body is refused.
    var request: JSONValue?

    /// The response to send again.
    var response: APIResponse {
        var headers = self.headers
        headers["Idempotent-Replayed"] = "true"
        return APIResponse(status: status, headers: headers, body: body)
    }

    /// A key's id: bytes other than `A–Z a–z 0–9 - _ ~ @ : + =` become `%XX`, so Folio's keys
    /// (`<store uuid>-<20 digits>`, `…@<version>`) read as they are.
    /// - Throws: ``RequestError`` (400, field `Idempotency-Key`) for a key that is empty, holds
    ///   anything but visible ASCII, or is longer than 256 bytes once escaped.
    static func escape(_ key: String) throws(RequestError) -> String {
        var escaped = ""
        for byte in key.utf8 {
            guard byte > 0x20, byte < 0x7F else {
                throw RequestError(400, "an Idempotency-Key is visible ASCII (no spaces or control characters)", field: "Idempotency-Key")
            }
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "@"), UInt8(ascii: ":"),
                UInt8(ascii: "+"), UInt8(ascii: "="):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                escaped += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        guard !escaped.isEmpty, escaped.utf8.count <= 256 else {
            throw RequestError(400, "an Idempotency-Key is 1–256 bytes (once %-escaped)", field: "Idempotency-Key")
        }
        return escaped
    }
}
