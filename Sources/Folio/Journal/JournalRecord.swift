/// One committed transaction as the journal holds it: everything needed to redo it.
///
/// Every change is a "set" (an entity's whole new JSON, a command file's whole content) or a
/// "remove", so replaying a record any number of times gives the same files: recovery is
/// idempotent.
struct JournalRecord: Sendable, Equatable {
    /// One entity change in one partition file.
    struct Change: Sendable, Equatable {
        var address: PartitionAddress
        var id: String
        /// The entity's new JSON, or nil when the entity is removed from this partition.
        var entity: JSONValue?
        /// The server's version of the entity, when the sync engine learnt it (nil: unchanged).
        /// Removing the entity removes its version too, unless the removal names one: a local
        /// delete keeps the version the server still has until the delete is acknowledged (a
        /// tombstone version, FORMAT.md), so its `DELETE` can say `If-Match`.
        var version: String? = nil
        /// The server no longer has the entity (a delete was acknowledged): its version goes,
        /// whatever the entity's local state.
        var forgetsVersion = false
    }

    /// One change to the outbox.
    enum OutboxChange: Sendable, Equatable {
        /// A new command, with its file's whole content.
        case enqueue(sequence: UInt64, command: JSONValue)
        /// The command is gone from the queue: sent (then kept in `outbox/sent/` when
        /// `archive`), coalesced away, or dropped by the app.
        case remove(sequence: UInt64, archive: Bool)
        /// The command can never succeed: it moves to `outbox/failed/` with the reason.
        case fail(sequence: UInt64, reason: JSONValue)
        /// A failed command goes back into the queue, under its original number.
        case retry(sequence: UInt64)

        var sequence: UInt64 {
            switch self {
            case .enqueue(let sequence, _), .remove(let sequence, _), .fail(let sequence, _), .retry(let sequence):
                return sequence
            }
        }
    }

    var transaction: UInt64
    var changes: [Change]
    var outbox: [OutboxChange] = []

    /// The payload bytes: compact JSON (see FORMAT.md, "Journal"), keys in the canonical order.
    /// Written straight into bytes, without building the record as JSON values first: a commit
    /// writes one, and a bulk import's holds every entity. The same bytes as
    /// `JSONWriter.compact` of the record's JSON value (JournalRecordTests).
    func payload() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + 192 * changes.count)
        // `"name":value`, after a comma unless it is the object's first member.
        func member(_ name: StaticString, _ value: JSONValue, first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: "\":".utf8)
            JSONWriter.appendCompact(value, to: &out)
        }
        func number(_ value: UInt64) -> JSONValue { .number(String(value)) }
        out.append(contentsOf: "{\"changes\":[".utf8)
        for (index, change) in changes.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "{"))
            member("collection", .string(change.address.collection), first: true)
            if let entity = change.entity {
                member("entity", entity)
            } else {
                member("deleted", .bool(true))
            }
            member("granularity", .string(change.address.granularity.rawValue))
            member("id", .string(change.id))
            member("partition", .string(change.address.key.text))
            if change.forgetsVersion {
                member("version", .null)
            } else if let version = change.version {
                member("version", .string(version))
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        if !outbox.isEmpty {
            out.append(contentsOf: ",\"outbox\":[".utf8)
            for (index, change) in outbox.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "{"))
                switch change {
                case .enqueue(let sequence, let command):
                    member("command", command, first: true)
                    member("enqueue", number(sequence))
                case .remove(let sequence, let archive):
                    member("archive", .bool(archive), first: true)
                    member("remove", number(sequence))
                case .fail(let sequence, let reason):
                    member("fail", number(sequence), first: true)
                    member("reason", reason)
                case .retry(let sequence):
                    member("retry", number(sequence), first: true)
                }
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Decodes and validates a payload. Every name is validated again, so a damaged or foreign
    /// journal cannot make Folio write outside the store.
    static func decode(transaction: UInt64, payload: [UInt8]) throws(FolioError) -> JournalRecord {
        func bad(_ why: String) -> FolioError {
            FolioError(.corruptJournal, "journal record of transaction \(transaction): \(why)", path: StoreLayout.journal)
        }
        let value: JSONValue
        do { value = try JSONParser.parse(payload) } catch { throw bad(error.message) }
        guard case .array(let items)? = value["changes"] else { throw bad("no \"changes\" array") }
        var changes: [Change] = []
        changes.reserveCapacity(items.count)
        for item in items {
            guard let collection = item["collection"]?.stringValue,
                let granularity = item["granularity"]?.stringValue.flatMap(PartitionGranularity.init(rawValue:)),
                let partition = item["partition"]?.stringValue,
                let id = item["id"]?.stringValue
            else { throw bad("a change lacks collection, granularity, partition or id") }
            let address: PartitionAddress
            do {
                address = try PartitionAddress(collection: collection, granularity: granularity, partitionText: partition)
                try Names.validateID(id)
            } catch { throw bad(error.message) }
            let entity = item["entity"]
            if entity == nil && item["deleted"] != .bool(true) { throw bad("change of \"\(id)\" has neither entity nor deleted") }
            if let entity, entity.objectValue == nil { throw bad("entity \"\(id)\" is not a JSON object") }
            changes.append(
                Change(
                    address: address, id: id, entity: entity, version: item["version"]?.stringValue,
                    forgetsVersion: item["version"] == .null))
        }
        var outbox: [OutboxChange] = []
        if case .array(let items)? = value["outbox"] {
            for item in items {
                if let sequence = item["enqueue"]?.sequenceValue, let command = item["command"], command.objectValue != nil {
                    outbox.append(.enqueue(sequence: sequence, command: command))
                } else if let sequence = item["remove"]?.sequenceValue {
                    outbox.append(.remove(sequence: sequence, archive: item["archive"] == .bool(true)))
                } else if let sequence = item["fail"]?.sequenceValue, let reason = item["reason"] {
                    outbox.append(.fail(sequence: sequence, reason: reason))
                } else if let sequence = item["retry"]?.sequenceValue {
                    outbox.append(.retry(sequence: sequence))
                } else {
                    throw bad("an outbox change is not enqueue, remove, fail or retry")
                }
            }
        }
        return JournalRecord(transaction: transaction, changes: changes, outbox: outbox)
    }
}

extension JSONValue {
    /// A positive integer that fits a command sequence number.
    var sequenceValue: UInt64? {
        guard case .number(let text) = self, let value = UInt64(text), value > 0 else { return nil }
        return value
    }
}

/// One partition file of one collection.
struct PartitionAddress: Hashable, Sendable, Comparable {
    let collection: String
    let granularity: PartitionGranularity
    let key: PartitionKey
}

extension PartitionAddress {
    /// Validates every part: the collection name and a key of the granularity's form.
    init(collection: String, granularity: PartitionGranularity, partitionText: String) throws(FolioError) {
        try Names.validateCollection(collection)
        let key: PartitionKey
        switch granularity {
        case .none:
            guard partitionText.isEmpty else { throw FolioError(.invalidName, "unpartitioned collection \(collection) has a partition key") }
            key = .whole
        case .day: key = try PartitionKey.validDay(partitionText)
        case .month: key = try PartitionKey.validMonth(partitionText)
        }
        self.init(collection: collection, granularity: granularity, key: key)
    }

    var path: String { StoreLayout.path(collection: collection, granularity: granularity, key: key) }

    static func < (a: PartitionAddress, b: PartitionAddress) -> Bool { a.path < b.path }
}
