import Foundation

/// Checks the members of a client's JSON object, naming the field in every error. Members it is
/// not asked about are left alone (kept as they are).
struct FieldChecker {
    let fields: JSONObject

    /// The body as an object.
    /// - Throws: ``RequestError`` (400, field `body`) for anything but an object.
    init(_ body: JSONValue) throws(RequestError) {
        guard case .object(let fields) = body else {
            throw RequestError(400, "the body must be a JSON object, not \(body.typeDescription)", field: "body")
        }
        self.fields = fields
    }

    private func missing(_ name: String, _ type: String) -> RequestError {
        RequestError(400, "\"\(name)\" is missing: it must be \(type)", field: name)
    }

    private func wrongType(_ name: String, _ type: String, _ value: JSONValue) -> RequestError {
        RequestError(400, "\"\(name)\" must be \(type), not \(value.typeDescription)", field: name)
    }

    /// A required string.
    func string(_ name: String, maxBytes: Int = 65_536) throws(RequestError) -> String {
        guard let value = fields[name] else { throw missing(name, "a string") }
        guard case .string(let text) = value else { throw wrongType(name, "a string", value) }
        guard text.utf8.count <= maxBytes else { throw RequestError(400, "\"\(name)\" is longer than \(maxBytes) bytes", field: name) }
        return text
    }

    /// An optional string: absent and `null` are nil.
    func optionalString(_ name: String, maxBytes: Int = 65_536) throws(RequestError) -> String? {
        guard let value = fields[name], value != .null else { return nil }
        return try string(name, maxBytes: maxBytes)
    }

    /// A required boolean.
    func bool(_ name: String) throws(RequestError) -> Bool {
        guard let value = fields[name] else { throw missing(name, "true or false") }
        guard case .bool(let bool) = value else { throw wrongType(name, "true or false", value) }
        return bool
    }

    /// A required integer in a range.
    func integer(_ name: String, in range: ClosedRange<Int64>) throws(RequestError) -> Int64 {
        let type = "an integer from \(range.lowerBound) to \(range.upperBound)"
        guard let value = fields[name] else { throw missing(name, type) }
        guard case .integer(let integer) = value else { throw wrongType(name, type, value) }
        guard range.contains(integer) else { throw RequestError(400, "\"\(name)\" must be \(type), not \(integer)", field: name) }
        return integer
    }

    /// A required day `YYYY-MM-DD`.
    func day(_ name: String) throws(RequestError) -> String {
        let text = try string(name, maxBytes: 10)
        guard Names.isDay(text) else { throw RequestError(400, "\"\(name)\" must be a day YYYY-MM-DD, not \(text.debugDescription)", field: name) }
        return text
    }

    /// A required timestamp as Folio writes dates: ISO 8601 in UTC, with or without milliseconds.
    func timestamp(_ name: String) throws(RequestError) {
        let text = try string(name, maxBytes: 64)
        guard Self.parseTimestamp(text) != nil else {
            throw RequestError(400, "\"\(name)\" must be an ISO 8601 date like 2026-11-22T09:30:00.000Z, not \(text.debugDescription)", field: name)
        }
    }

    static func parseTimestamp(_ text: String) -> Date? {
        // Either form is fine: a parse failure of the first only means trying the second.
        for style in [Date.ISO8601FormatStyle(includingFractionalSeconds: true), Date.ISO8601FormatStyle()] {
            do { return try style.parse(text) } catch { continue }
        }
        return nil
    }

    /// The `id` member, which must equal the URL's.
    func id(matching pathID: String) throws(RequestError) -> String {
        let id = try string("id", maxBytes: 256)
        guard id == pathID else {
            throw RequestError(400, "the body's id \(id.debugDescription) differs from the URL's \(pathID.debugDescription)", field: "id")
        }
        return id
    }
}
