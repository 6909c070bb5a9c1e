import Foundation

/// A field of an entity's JSON object, as the convergence model sees it (the test's entities have
/// strings and booleans only).
enum ModelValue: Equatable, CustomStringConvertible, Sendable {
    case string(String)
    case bool(Bool)
    /// Anything else found in real JSON: never equal to what the model predicts.
    case unexpected(String)

    var description: String {
        switch self {
        case .string(let text): "\"\(text)\""
        case .bool(let value): "\(value)"
        case .unexpected(let text): "<\(text)>"
        }
    }

    /// The value as JSON (for the child's ops file).
    var json: Any {
        switch self {
        case .string(let text): text
        case .bool(let value): value
        case .unexpected(let text): text
        }
    }
}

/// An entity's JSON object: member name → value. A member that is absent (or `null`) is not in
/// the dictionary.
typealias ModelEntity = [String: ModelValue]

/// Collection → id → entity.
typealias ModelCollections = [String: [String: ModelEntity]]

extension ModelValue: Decodable {
    /// Reads real JSON strictly: `true`/`false` are booleans, strings are strings, anything else
    /// is unexpected.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else {
            self = .unexpected("neither a string nor a boolean")
        }
    }
}

extension Dictionary where Key == String, Value == ModelValue {
    /// A real entity's JSON object (`null` members count as absent).
    static func decode(_ json: Data) throws -> ModelEntity {
        try JSONDecoder().decode([String: ModelValue?].self, from: json).compactMapValues { $0 }
    }

    /// `{date: "…", done: false, …}`, members sorted, for messages.
    var rendered: String {
        "{" + keys.sorted().filter { $0 != "id" }.map { "\($0): \(self[$0]!)" }.joined(separator: ", ") + "}"
    }
}

/// What the server and the clients should hold, predicted from PROTOCOL.md's three-way merge, the
/// default conflict policy, applied to each client's offline changes in the order the syncs ran.
///
/// Each client is modelled by what it saw at the end of its last sync (`seen`: the server's state
/// then, since a completed sync pushed everything and pulled every change) and what it holds now
/// (`local`: `seen` plus its offline operations). When its sync completes, each entity it changed
/// (`local` differs from `seen`) meets the server's current value `S`, with `B` = seen and
/// `L` = local:
///
/// - `L` is an entity: fields where `L` differs from `B` take `L`'s value, the others `S`'s. With no
///   `S` (a create, or the server deleted it meanwhile) the result is `L`: an edit over a
///   server-side delete recreates.
/// - `L` is a deletion: if `S` equals `B` (nobody else changed it) the entity is deleted; if `S`
///   differs, the server's edit is kept (the deleting user never saw it); if `S` is gone it stays gone.
///
/// For a collection that coalesces (todos) the comparison is on the client's net change since its
/// last sync: its offline edits of an entity become one command, so an edit made in several steps
/// is one change; but a custom command about the entity splits it in two (changes do not coalesce
/// across a command queued between them). For a collection that does not (tags) every transaction is a command of its own,
/// sent and settled one after the other as PROTOCOL.md says: each meets the server as the previous
/// one left it, with `B` = the entity before that transaction and `L` = after it. So a rename that
/// the server merged and applied stays applied even if a later delete of the same tag loses to
/// another client's edit.
struct ConvergenceModel {
    struct Client {
        var seen: ModelCollections = [:]
        var local: ModelCollections = [:]
        /// Collections that do not coalesce: per entity, its state before its first command since
        /// the last sync, then after each transaction that changed it.
        var history: [String: [String: [ModelEntity?]]] = [:]
        /// Entities of such collections touched by the transaction being applied.
        var touched: Set<[String]> = []
        /// Coalescing collections: per entity, its state when a custom command about it was queued.
        var barriers: [String: [String: [ModelEntity?]]] = [:]
    }

    static let collections = ["todos", "tags"]
    /// Collections whose offline changes coalesce into one command per entity (`.push(coalescing: true)`).
    static let coalescing: Set<String> = ["todos"]

    var server: ModelCollections = [:]
    var clients: [Client]

    init(clients count: Int) {
        clients = Array(repeating: Client(), count: count)
    }

    /// Applies one offline operation to a client's local state. Returns false when it names an
    /// entity the client does not hold (the generator never does that).
    @discardableResult
    mutating func apply(_ operation: ModelOperation, client: Int) -> Bool {
        switch operation {
        case .create(let collection, let id, _), .set(let collection, let id, _), .delete(let collection, let id):
            if !Self.coalescing.contains(collection) && clients[client].history[collection]?[id] == nil {
                clients[client].history[collection, default: [:]][id] = [clients[client].local[collection]?[id]]
            }
            if !Self.coalescing.contains(collection) { clients[client].touched.insert([collection, id]) }
        case .custom(_, let about?):
            // A command about a todo is sent between the todo's changes before it and after it:
            // those do not coalesce across it, so they meet the server as two commands.
            clients[client].barriers["todos", default: [:]][about, default: []].append(clients[client].local["todos"]?[about])
        case .custom:
            break
        }
        switch operation {
        case .create(let collection, let id, let fields):
            var entity = fields
            entity["id"] = .string(id)
            clients[client].local[collection, default: [:]][id] = entity
        case .set(let collection, let id, let changes):
            guard var entity = clients[client].local[collection]?[id] else { return false }
            for (name, value) in changes { entity[name] = value }
            clients[client].local[collection]![id] = entity
        case .delete(let collection, let id):
            guard clients[client].local[collection]?.removeValue(forKey: id) != nil else { return false }
        case .custom:
            break
        }
        return true
    }

    /// A transaction of a client ended: each entity of a non-coalescing collection it changed has
    /// one more command.
    mutating func endTransaction(client: Int) {
        for key in clients[client].touched.sorted(by: { $0.joined(separator: "/") < $1.joined(separator: "/") }) {
            let (collection, id) = (key[0], key[1])
            let now = clients[client].local[collection]?[id]
            if clients[client].history[collection]?[id]?.last.flatMap({ $0 }) != now {
                clients[client].history[collection]![id]!.append(now)
            }
        }
        clients[client].touched = []
    }

    /// A client's sync completed: its changes meet the server (net for coalescing collections,
    /// command by command for the others), then it holds the server's state.
    mutating func sync(client: Int) {
        let model = clients[client]
        for collection in Self.collections {
            if !Self.coalescing.contains(collection) {
                for (id, states) in (model.history[collection] ?? [:]).sorted(by: { $0.key < $1.key }) {
                    for (base, local) in zip(states, states.dropFirst()) where base != local {
                        server[collection, default: [:]][id] = Self.resolve(base: base, local: local, server: server[collection]?[id])
                    }
                }
                continue
            }
            let ids = Set(model.seen[collection, default: [:]].keys).union(model.local[collection, default: [:]].keys)
            for id in ids.sorted() {
                // The net change, split where a custom command about the entity stands between.
                let states = [model.seen[collection]?[id]] + (model.barriers[collection]?[id] ?? []) + [model.local[collection]?[id]]
                for (base, local) in zip(states, states.dropFirst()) where base != local {
                    server[collection, default: [:]][id] = Self.resolve(base: base, local: local, server: server[collection]?[id])
                }
            }
        }
        clients[client].seen = server
        clients[client].local = server
        clients[client].history = [:]
        clients[client].barriers = [:]
    }

    /// The three-way merge of PROTOCOL.md (see the type's comment).
    static func resolve(base: ModelEntity?, local: ModelEntity?, server: ModelEntity?) -> ModelEntity? {
        guard let local else {
            guard let server, let base else { return nil }
            return server == base ? nil : server
        }
        // An edit over a server-side delete recreates, if it changed something.
        guard let server else { return local == base ? nil : local }
        guard let base else { return local }
        var merged: ModelEntity = [:]
        for name in Set(base.keys).union(local.keys).union(server.keys) {
            merged[name] = local[name] != base[name] ? local[name] : server[name]
        }
        return merged
    }
}

/// One offline operation of a client, as the model applies it and the child runs it.
enum ModelOperation: CustomStringConvertible {
    case create(collection: String, id: String, fields: ModelEntity)
    /// Change some fields; `nil` removes an optional one.
    case set(collection: String, id: String, changes: [String: ModelValue?])
    case delete(collection: String, id: String)
    /// The custom command `stamp` with a token, about a todo or about nothing.
    case custom(token: String, about: String?)

    /// `collection/id` of the entity the operation names, if any.
    var target: String? {
        switch self {
        case .create(let collection, let id, _), .set(let collection, let id, _), .delete(let collection, let id): "\(collection)/\(id)"
        case .custom(_, let about): about.map { "todos/\($0)" }
        }
    }

    var description: String {
        switch self {
        case .create(let collection, let id, let fields): "create \(collection)/\(id) \(fields.rendered)"
        case .set(let collection, let id, let changes):
            "set \(collection)/\(id) " + changes.keys.sorted().map { "\($0)=\(changes[$0]!.map { "\($0)" } ?? "nil")" }.joined(separator: " ")
        case .delete(let collection, let id): "delete \(collection)/\(id)"
        case .custom(let token, let about): "custom stamp \(token)" + (about.map { " about todos/\($0)" } ?? "")
        }
    }

    /// The JSON object the child reads (Tests/ClientChild/ClientOperation.swift).
    var json: [String: Any] {
        switch self {
        case .create(let collection, let id, let fields):
            ["op": "create", "collection": collection, "id": id, "fields": fields.mapValues(\.json)]
        case .set(let collection, let id, let changes):
            ["op": "set", "collection": collection, "id": id, "fields": changes.mapValues { $0?.json ?? NSNull() }]
        case .delete(let collection, let id):
            ["op": "delete", "collection": collection, "id": id]
        case .custom(let token, let about):
            about.map { ["op": "custom", "token": token, "about": $0] } ?? ["op": "custom", "token": token]
        }
    }
}
