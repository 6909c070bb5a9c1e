import Folio

/// An entity of one of the served collections, stored exactly as its JSON object (fields the
/// server does not know included), with the server's bookkeeping kept in other collections.
protocol ServerDocument: Entity where ID == String {
    /// The record of its version and of its last change (the change feed).
    associatedtype Version: VersionRecord
    /// The collection as the protocol names it.
    static var kind: CollectionKind { get }
    /// The entity's JSON object, `id` included.
    var fields: JSONObject { get }
    /// The partition it lives in: its day, month, or `""`.
    var partitionKey: String { get }
    /// A document from its stored JSON object, id and partition.
    init(fields: JSONObject, id: String, partitionKey: String)
}

extension ServerDocument {
    /// The entity's JSON.
    var json: JSONValue { .object(fields) }
}

/// Reading a stored document back: its JSON object must have a string `id` (and `date` when the
/// collection is partitioned by it); everything else was checked when it was accepted.
enum StoredFields {
    static func decode(_ decoder: any Decoder, requiring names: [String]) throws -> (fields: JSONObject, values: [String]) {
        guard case .object(let fields) = try JSONValue(from: decoder) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "an entity is a JSON object"))
        }
        var values: [String] = []
        for name in names {
            guard let value = fields[name]?.stringValue else {
                throw DecodingError.keyNotFound(AnyKey(name), .init(codingPath: decoder.codingPath, debugDescription: "\"\(name)\" must be a string"))
            }
            values.append(value)
        }
        return (fields, values)
    }
}

/// A todo: `todos/<YYYY-MM>/<YYYY-MM-DD>.json`.
struct TodoDocument: ServerDocument {
    typealias Version = TodoVersion
    static let collection = "todos"
    static let partitioning = Partitioning<TodoDocument>.day(\.date)
    static let kind = CollectionKind.todos

    let id: String
    let date: String
    let fields: JSONObject

    var partitionKey: String { date }
    var isDone: Bool { fields["done"]?.boolValue == true }
    /// The tag of the todo, if it has one (absent, `null` and `""` are none).
    var tagID: String? { fields["tagID"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } }

    init(fields: JSONObject, id: String, date: String) {
        self.fields = fields
        self.id = id
        self.date = date
    }

    init(fields: JSONObject, id: String, partitionKey: String) {
        self.init(fields: fields, id: id, date: partitionKey)
    }

    init(from decoder: any Decoder) throws {
        let (fields, values) = try StoredFields.decode(decoder, requiring: ["id", "date"])
        self.init(fields: fields, id: values[0], date: values[1])
    }

    func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

/// A tag: `tags.json`.
struct TagDocument: ServerDocument {
    typealias Version = TagVersion
    static let collection = "tags"
    static let partitioning = Partitioning<TagDocument>.none
    static let kind = CollectionKind.tags

    let id: String
    let fields: JSONObject

    var partitionKey: String { "" }

    init(fields: JSONObject, id: String) {
        self.fields = fields
        self.id = id
    }

    init(fields: JSONObject, id: String, partitionKey: String) {
        self.init(fields: fields, id: id)
    }

    init(from decoder: any Decoder) throws {
        let (fields, values) = try StoredFields.decode(decoder, requiring: ["id"])
        self.init(fields: fields, id: values[0])
    }

    func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

/// A day's statistics, computed by the server: `dailyStats/<YYYY-MM>.json`.
struct DailyStatDocument: ServerDocument {
    typealias Version = DailyStatVersion
    static let collection = "dailyStats"
    static let partitioning = Partitioning<DailyStatDocument>.month(\.date)
    static let kind = CollectionKind.dailyStats

    let id: String
    let date: String
    let fields: JSONObject

    var partitionKey: String { String(date.prefix(7)) }

    init(fields: JSONObject, date: String) {
        self.fields = fields
        self.id = date
        self.date = date
    }

    init(fields: JSONObject, id: String, partitionKey: String) {
        self.init(fields: fields, date: id)
    }

    init(from decoder: any Decoder) throws {
        let (fields, values) = try StoredFields.decode(decoder, requiring: ["id", "date"])
        self.fields = fields
        self.id = values[0]
        self.date = values[1]
    }

    func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}
