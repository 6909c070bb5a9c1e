import Folio
import Foundation

/// One operation of the test's ops file, a JSON object:
///
/// - `{"op": "create", "collection": "todos", "fields": {...every field but id...}, "id": "…"}`
/// - `{"op": "set", "collection": "todos", "id": "…", "fields": {"date": "2026-12-03"}}`: read the
///   entity, change these fields (`null` removes an optional one), write it back, as an app does
/// - `{"op": "delete", "collection": "tags", "id": "…"}`
/// - `{"op": "custom", "token": "…", "about": "<todo id>"}` (`about` optional): enqueue a custom
///   command `stamp` whose payload carries the token
struct ClientOperation: Sendable {
    /// A field's new value.
    enum Value: Sendable {
        case string(String)
        case bool(Bool)
        case null
    }

    var op: String
    var collection: String
    var id: String
    var fields: [String: Value]
    var token: String
    var about: String?

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// The transactions of an ops file: an array of arrays of operations.
    static func transactions(from data: Data) throws -> [[ClientOperation]] {
        guard let transactions = try JSONSerialization.jsonObject(with: data) as? [[[String: Any]]] else {
            throw Malformed(description: "the ops file is not an array of arrays of objects")
        }
        return try transactions.map { try $0.map(ClientOperation.init) }
    }

    init(_ object: [String: Any]) throws {
        guard let op = object["op"] as? String else { throw Malformed(description: "no op in \(object)") }
        self.op = op
        collection = object["collection"] as? String ?? ""
        id = object["id"] as? String ?? ""
        fields = try (object["fields"] as? [String: Any] ?? [:]).mapValues { value in
            if value is NSNull { return .null }
            if let text = value as? String { return .string(text) }
            if let flag = value as? Bool { return .bool(flag) }
            throw Malformed(description: "a field value is neither a string, a boolean nor null: \(value)")
        }
        token = object["token"] as? String ?? ""
        about = object["about"] as? String
    }

    /// Runs the operation in `tx`. Returns false when it names an entity the store does not hold.
    func apply(in tx: Transaction) throws -> Bool {
        switch (op, collection) {
        case ("create", "todos"):
            var todo = ConvergenceTodo(id: id, title: "", date: "", done: false, tagID: nil, note: "")
            try set(&todo)
            try tx.upsert(todo)
        case ("create", "tags"):
            var tag = ConvergenceTag(id: id, name: "", color: "")
            try set(&tag)
            try tx.upsert(tag)
        case ("set", "todos"):
            guard var todo = try tx.get(ConvergenceTodo.self, id: id) else { return false }
            try set(&todo)
            try tx.upsert(todo)
        case ("set", "tags"):
            guard var tag = try tx.get(ConvergenceTag.self, id: id) else { return false }
            try set(&tag)
            try tx.upsert(tag)
        case ("delete", "todos"):
            return try tx.delete(ConvergenceTodo.self, id: id)
        case ("delete", "tags"):
            return try tx.delete(ConvergenceTag.self, id: id)
        case ("custom", _):
            if let about {
                try tx.enqueue("stamp", payload: StampPayload(token: token), about: ConvergenceTodo.self, id: about)
            } else {
                try tx.enqueue("stamp", payload: StampPayload(token: token))
            }
        default:
            throw Malformed(description: "unknown operation \(op) on \"\(collection)\"")
        }
        return true
    }

    private func set(_ todo: inout ConvergenceTodo) throws {
        for (name, value) in fields {
            switch name {
            case "title": todo.title = try string(value, name)
            case "date": todo.date = try string(value, name)
            case "done":
                guard case .bool(let done) = value else { throw Malformed(description: "done is not a boolean") }
                todo.done = done
            case "tagID":
                if case .null = value { todo.tagID = nil } else { todo.tagID = try string(value, name) }
            case "note": todo.note = try string(value, name)
            default: throw Malformed(description: "todos have no field \(name)")
            }
        }
    }

    private func set(_ tag: inout ConvergenceTag) throws {
        for (name, value) in fields {
            switch name {
            case "name": tag.name = try string(value, name)
            case "color": tag.color = try string(value, name)
            default: throw Malformed(description: "tags have no field \(name)")
            }
        }
    }

    private func string(_ value: Value, _ name: String) throws -> String {
        guard case .string(let text) = value else { throw Malformed(description: "\(name) is not a string") }
        return text
    }
}
