/// One committed transaction as the journal holds it: everything needed to redo it.
///
/// Every change is a "set" (the entity's whole new JSON) or a "remove", so replaying a record any
/// number of times gives the same files: recovery is idempotent.
struct JournalRecord: Sendable, Equatable {
    /// One entity change in one partition file.
    struct Change: Sendable, Equatable {
        var address: PartitionAddress
        var id: String
        /// The entity's new JSON, or nil when the entity is removed from this partition.
        var entity: JSONValue?
    }

    var transaction: UInt64
    var changes: [Change]

    /// The payload bytes: compact JSON (see FORMAT.md, "Journal").
    func payload() -> [UInt8] {
        let changes: [JSONValue] = changes.map { change in
            var members: [String: JSONValue] = [
                "collection": .string(change.address.collection),
                "granularity": .string(change.address.granularity.rawValue),
                "partition": .string(change.address.key.text),
                "id": .string(change.id),
            ]
            if let entity = change.entity { members["entity"] = entity } else { members["deleted"] = .bool(true) }
            return .object(members)
        }
        return JSONWriter.compact(.object(["changes": .array(changes)]))
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
                  let granularityText = item["granularity"]?.stringValue,
                  let granularity = PartitionGranularity(rawValue: granularityText),
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
            changes.append(Change(address: address, id: id, entity: entity))
        }
        return JournalRecord(transaction: transaction, changes: changes)
    }
}

/// One partition file of one collection.
struct PartitionAddress: Hashable, Sendable, Comparable {
    let collection: String
    let granularity: PartitionGranularity
    let key: PartitionKey

    init(collection: String, granularity: PartitionGranularity, key: PartitionKey) {
        self.collection = collection
        self.granularity = granularity
        self.key = key
    }

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
