import Foundation

/// What the server accepts from clients, per collection (the TyTE model shared with the app).
/// Known fields must have their types; unknown fields are kept as sent.
enum Validation {
    /// A todo: `id` (the uppercase UUID of the URL), `title`, `date` (YYYY-MM-DD), `done`,
    /// `priority` (0…3), `tagID` (a string, or absent/null), `createdAt`, `updatedAt` (ISO 8601).
    static func todo(_ body: JSONValue, id pathID: String) throws(RequestError) -> TodoDocument {
        let checker = try FieldChecker(body)
        let id = try checker.id(matching: pathID)
        guard UUID(uuidString: id)?.uuidString == id else {
            throw RequestError(400, "a todo's id is an uppercase UUID (8-4-4-4-12 hex digits), not \(id.debugDescription)", field: "id")
        }
        _ = try checker.string("title")
        let date = try checker.day("date")
        _ = try checker.bool("done")
        _ = try checker.integer("priority", in: 0...3)
        if let tagID = try checker.optionalString("tagID", maxBytes: 256), !tagID.isEmpty { try Names.validateID(tagID, field: "tagID") }
        try checker.timestamp("createdAt")
        try checker.timestamp("updatedAt")
        return TodoDocument(fields: checker.fields, id: id, date: date)
    }

    /// A tag: `id` (the URL's), `name`, `color` (`#RRGGBB`).
    static func tag(_ body: JSONValue, id pathID: String) throws(RequestError) -> TagDocument {
        let checker = try FieldChecker(body)
        let id = try checker.id(matching: pathID)
        _ = try checker.string("name")
        let color = try checker.string("color", maxBytes: 7)
        let hexDigits = color.utf8.dropFirst().allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || ($0 >= 0x61 && $0 <= 0x66) }
        guard color.utf8.count == 7, color.hasPrefix("#"), hexDigits else {
            throw RequestError(400, "\"color\" must be #RRGGBB (hex), not \(color.debugDescription)", field: "color")
        }
        return TagDocument(fields: checker.fields, id: id)
    }
}
