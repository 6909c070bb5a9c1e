/// Locating and reporting stored entities that do not decode as their Swift type.
extension StoreEngine {
    /// The entity of this partition that failed to decode as `E`, located in its file.
    func undecodable<E: Entity>(_ type: E.Type, in partition: Partition, id: String) -> UndecodableEntity? {
        guard let json = partition.entities[id] else { return nil }
        let failure: EntityCoder.DecodingFailure
        if case .failure(let decoding) = coder.decodeOne(E.self, from: json) {
            failure = decoding
        } else if let mismatch = Partition.keyMismatch(id: id, in: json, path: partition.address.path) {
            failure = EntityCoder.DecodingFailure(field: ["id"], message: mismatch.message)
        } else {
            return nil
        }
        let path = partition.address.path
        var position: JSONKeyLocator.Position?
        // Locate it only if the file holds the entity as served (it may still be in the journal).
        do {
            if let (bytes, _) = try fileSystem.read(path),
                (try PartitionFile.decode(bytes, path: path)).entities[id] == json
            {
                let locator = JSONKeyLocator(bytes)
                var keyPath = ["entities", id] + failure.field
                while keyPath.count >= 2, position == nil {
                    position = locator.position(of: keyPath)
                    keyPath.removeLast()
                }
            }
        } catch {
            // Unreadable now: the entity is reported without a line.
        }
        return UndecodableEntity(
            collection: partition.address.collection, id: id, path: path, line: position?.line,
            column: position?.column, field: failure.field.isEmpty ? nil : failure.field.joined(separator: "."),
            message: failure.message, fieldPath: failure.field)
    }

    /// Logs an entity a read skipped because it does not decode (once per stored value).
    func reportUndecodable<E: Entity>(_ type: E.Type, in partition: Partition, error: FolioError) {
        guard let id = error.entityID else { return }
        let stored = partition.entities[id].map { String(decoding: JSONWriter.compact($0), as: UTF8.self) } ?? ""
        guard isFirstReport(ofUndecodable: "\(E.self)\u{0}\(partition.address.path)\u{0}\(id)\u{0}\(stored)") else { return }
        let located = undecodable(E.self, in: partition, id: id)?.error ?? error
        report(
            .error, "\(located.message); skipped by reads of \(E.self) until migrated or fixed (its fields are kept)",
            path: located.path.map { path in located.line.map { "\(path):\($0):\(located.column ?? 1)" } ?? path })
    }

    /// Every entity of the selection that does not decode as `E`, in path and id order.
    func undecodableEntities<E: Entity>(_ type: E.Type, in selection: PartitionSelection) throws(FolioError) -> [UndecodableEntity] {
        let granularity = try register(E.self)
        var result: [UndecodableEntity] = []
        for address in try addresses(collection: E.collection, granularity: granularity, selection: selection) {
            let partition = try partition(address)
            _ = partition.values(E.self, coder: coder)
            for id in partition.entities.keys.sorted(by: { $0.precedesInKeyOrder($1) }) where partition.failedToDecode(id) {
                if let entity = undecodable(E.self, in: partition, id: id) { result.append(entity) }
            }
        }
        return result
    }
}
