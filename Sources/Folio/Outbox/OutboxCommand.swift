public import Foundation

/// A command in the outbox: one local change waiting to be sent, as its file holds it.
///
/// Command files are written once and never rewritten (FORMAT.md, "Outbox").
public struct OutboxCommand: Sendable, Equatable, Identifiable {
    /// What the command does.
    public enum Operation: Sendable, Equatable {
        /// Store the entity (its whole JSON is in ``OutboxCommand/body``).
        case upsert
        /// Delete the entity.
        case delete
        /// An app-defined command; ``OutboxCommand/body`` holds its payload.
        case custom(String)
    }

    /// The position in the queue: commands are sent in increasing order.
    public let sequence: UInt64
    /// Globally unique: the store's id and the sequence. Send it as the idempotency key.
    public let id: String
    /// What the command does.
    public let operation: Operation
    /// The collection of the entity concerned (nil for a custom command about no entity).
    public let collection: String?
    /// The id of the entity concerned.
    public let entityID: String?
    /// The entity's partition key when the command was made (`""` for unpartitioned collections).
    public let partition: String?
    /// The server version the change was made on, for conflict detection (nil: the server has not
    /// seen the entity yet).
    public let baseVersion: String?
    /// When the command was enqueued.
    public let timestamp: Date
    /// The entity's JSON (upsert) or the custom payload, as compact UTF-8 JSON.
    public let body: Data?
    /// The entity as the change was made on it (its state before the change, once the earlier
    /// pending commands of the entity apply), as compact JSON; nil for a create. The base of a
    /// three-way merge when the server's version turns out to differ.
    public let base: Data?

    let json: JSONValue

    /// The command's file content.
    static func make(
        sequence: UInt64, writer: String, operation: Operation, collection: String?, entityID: String?,
        partition: String?, baseVersion: String?, body: JSONValue?, base: JSONValue? = nil, timestamp: Date
    ) -> JSONValue {
        var members: [String: JSONValue] = [
            "sequence": .number(String(sequence)),
            "id": .string(writer + "-" + CommandFileName.stem(sequence)),
            "timestamp": .string(timestamp.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))),
            "baseVersion": baseVersion.map(JSONValue.string) ?? .null,
        ]
        switch operation {
        case .upsert: members["operation"] = .string("upsert")
        case .delete: members["operation"] = .string("delete")
        case .custom(let name):
            members["operation"] = .string("custom")
            members["name"] = .string(name)
        }
        if let collection { members["collection"] = .string(collection) }
        if let entityID { members["entityID"] = .string(entityID) }
        if let partition { members["partition"] = .string(partition) }
        if let body { members[operation == .upsert ? "entity" : "payload"] = body }
        if let base { members["base"] = base }
        return .object(members)
    }

    /// Reads a command file's content, checking its shape.
    init(json: JSONValue, path: String) throws(FolioError) {
        func bad(_ why: String) -> FolioError { FolioError(.corruptFile, "not an outbox command: \(why)", path: path) }
        guard let sequence = json["sequence"]?.sequenceValue else { throw bad("no positive integer \"sequence\"") }
        guard let id = json["id"]?.stringValue, !id.isEmpty else { throw bad("no \"id\"") }
        guard let timestampText = json["timestamp"]?.stringValue,
            let timestamp = Self.parseDate(timestampText)
        else { throw bad("no ISO 8601 \"timestamp\"") }
        let operation: Operation
        switch json["operation"]?.stringValue {
        case "upsert": operation = .upsert
        case "delete": operation = .delete
        case "custom":
            guard let name = json["name"]?.stringValue else { throw bad("custom command without \"name\"") }
            operation = .custom(name)
        default: throw bad("\"operation\" must be upsert, delete or custom")
        }
        let collection = json["collection"]?.stringValue
        let entityID = json["entityID"]?.stringValue
        // Custom commands may or may not concern an entity.
        if operation == .upsert || operation == .delete {
            guard let collection, let entityID else { throw bad("\"collection\" and \"entityID\" are required") }
            do {
                try Names.validateCollection(collection)
                try Names.validateID(entityID)
            } catch { throw bad(error.message) }
            if operation == .upsert, json["entity"]?.objectValue == nil { throw bad("upsert without an \"entity\" object") }
        }
        let body = operation == .upsert ? json["entity"] : json["payload"]
        self.sequence = sequence
        self.id = id
        self.operation = operation
        self.collection = collection
        self.entityID = entityID
        self.partition = json["partition"]?.stringValue
        self.baseVersion = json["baseVersion"]?.stringValue
        self.timestamp = timestamp
        self.body = body.map { Data(JSONWriter.compact($0)) }
        self.base = json["base"].flatMap { $0.objectValue == nil ? nil : Data(JSONWriter.compact($0)) }
        self.json = json
    }

    static func parseDate(_ text: String) -> Date? {
        do { return try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) } catch {}
        do { return try Date.ISO8601FormatStyle().parse(text) } catch { return nil }
    }

    /// Whether two commands are the same file content (every member, compared as JSON values).
    /// - Parameters:
    ///   - a: A command.
    ///   - b: Another command.
    /// - Returns: True if their JSON is equal.
    public static func == (a: OutboxCommand, b: OutboxCommand) -> Bool { a.json == b.json }
}

/// A command that can never succeed, moved to `outbox/failed/` with the reason.
public struct FailedCommand: Sendable, Equatable, Identifiable {
    /// The command, unchanged.
    public let command: OutboxCommand
    /// Why it failed, in a sentence.
    public let reason: String
    /// The HTTP status the server answered, if any.
    public let status: Int?
    /// When it was moved to `failed/`.
    public let failedAt: Date?
    /// The reason file's whole JSON (it may hold more, e.g. the server's version of the entity).
    public let details: Data
    /// For a conflict kept for the app: the server's version of the entity.
    public let serverVersion: String?
    /// For a conflict kept for the app: the server's entity as compact JSON (nil if the server
    /// deleted it).
    public let serverEntity: Data?

    /// The command's sequence number, which ``Store/retryFailedCommand(_:)`` and
    /// ``Store/dropFailedCommand(_:)`` take.
    public var id: UInt64 { command.sequence }

    init(command: OutboxCommand, reason json: JSONValue) {
        self.command = command
        self.reason = json["reason"]?.stringValue ?? "unknown"
        self.status = json["status"]?.integerValue.map { Int($0) }
        self.failedAt = json["failedAt"]?.stringValue.flatMap(OutboxCommand.parseDate)
        self.details = Data(JSONWriter.compact(json))
        self.serverVersion = json["serverVersion"]?.stringValue
        self.serverEntity = json["serverEntity"].flatMap { $0.objectValue == nil ? nil : Data(JSONWriter.compact($0)) }
    }
}

/// Why a command failed, as the sync engine (or the app) reports it.
public struct FailureReason: Sendable {
    /// Why, in a sentence.
    public var reason: String
    /// The HTTP status, if any.
    public var status: Int?
    /// Extra JSON-compatible details (e.g. a bounded excerpt of the response body).
    public var details: [String: String]
    /// Details that are JSON values (the server's entity in a conflict kept for the app).
    var extra: [String: JSONValue] = [:]

    /// Creates a reason.
    /// - Parameters:
    ///   - reason: Why, in a sentence.
    ///   - status: The HTTP status, if any.
    ///   - details: Extra details, stored in the reason file.
    public init(_ reason: String, status: Int? = nil, details: [String: String] = [:]) {
        self.reason = reason
        self.status = status
        self.details = details
    }

    func json(at date: Date) -> JSONValue {
        var members: [String: JSONValue] = details.mapValues { .string($0) }
        members.merge(extra) { _, new in new }
        members["reason"] = .string(reason)
        members["failedAt"] = .string(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        if let status { members["status"] = .number(String(status)) }
        return .object(members)
    }
}
