import Foundation
import Logging
import PostgresNIO

/// Rows as the storage's values: entities and remembered responses, JSON kept as canonical TEXT.
extension PostgresStorage {
    func entities(on connection: PostgresConnection, _ query: PostgresQuery) async throws -> [String: StoredEntity] {
        var found: [String: StoredEntity] = [:]
        for try await (id, version, partitionKey, body) in try await connection.query(query, logger: logger)
            .decode((String, Int64, String, String?).self)
        {
            found[id] = try Self.entity(version: version, partitionKey: partitionKey, body: body)
        }
        return found
    }

    func records(of owner: Owner, keys: [String], on connection: PostgresConnection) async throws -> [String: IdempotencyRecord] {
        let rows = try await connection.query(
            """
            SELECT key, key_text, stored_day, stored_at, method, path, status, headers, body, request FROM folio_idempotency
            WHERE owner = \(owner.name) AND key = ANY(\(keys))
            """, logger: logger)
        var found: [String: IdempotencyRecord] = [:]
        for try await (key, keyText, day, storedAt, method, path, status, headers, body, request)
            in rows.decode((String, String, String, Date, String, String, Int64, String, String?, String?).self)
        {
            guard case .object(let headerValues) = try Self.json(headers) else {
                throw StorageError("the headers stored with the key \(key) are not an object")
            }
            found[key] = IdempotencyRecord(
                id: key, key: keyText, date: day, storedAt: storedAt, method: method, path: path, status: Int(status),
                headers: headerValues.compactMapValues(\.stringValue), body: try body.map(Self.json), request: try request.map(Self.json))
        }
        return found
    }

    static func entity(version: Int64, partitionKey: String, body: String?) throws -> StoredEntity {
        guard let body else { return StoredEntity(fields: nil, version: version, partitionKey: partitionKey) }
        guard case .object(let fields) = try json(body) else { throw StorageError("a stored entity is not a JSON object") }
        return StoredEntity(fields: fields, version: version, partitionKey: partitionKey)
    }

    /// Canonical JSON text (sorted keys): what the TEXT columns hold.
    static func text(_ value: JSONValue) throws -> String {
        String(decoding: try JSONCoding.data(value), as: UTF8.self)
    }

    static func json(_ text: String) throws -> JSONValue {
        do {
            return try JSONCoding.parse(Data(text.utf8))
        } catch {
            throw StorageError("the database holds JSON this server cannot read: \(error.message)")
        }
    }
}
