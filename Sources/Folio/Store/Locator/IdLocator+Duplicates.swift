/// One id in two partition files of a collection (a hand edit copied an entity into another day,
/// or a sync tool brought back an old file). Reads never pick one copy silently and writes never
/// overwrite either: `get` and every write of that id refuse with an error naming both files,
/// queries skip both copies and log the error, until a person deletes the wrong copy
/// (FORMAT.md, "Partition files").
extension IdLocator {
    /// Records that `address` holds `id`, noting a second file that holds it too.
    func index(_ id: String, in address: PartitionAddress) {
        let collection = address.collection
        if let known = idIndex.copies(of: id, in: collection), !known.contains(address.key) {
            // One more file holds an id already known in several (its place may be unset: a copy
            // that left one of them).
            noteDuplicate(id, in: [address])
        } else if let other = idIndex.key(of: id, in: collection), other != address.key {
            let otherAddress = PartitionAddress(collection: collection, granularity: address.granularity, key: other)
            // Check the other file as it is now (another process may have moved the entity).
            let holds: Bool
            do { holds = try partition(otherAddress).entities[id] != nil } catch { holds = false }
            if holds, idIndex.key(of: id, in: collection) != address.key { noteDuplicate(id, in: [address, otherAddress]) }
        }
        if idIndex.copies(of: id, in: collection) == nil || idIndex.key(of: id, in: collection) == nil {
            idIndex.place(id, at: address.key, in: collection)
        }
    }

    /// Records that the files at `addresses` all hold `id`, and reports it the first time.
    private func noteDuplicate(_ id: String, in addresses: [PartitionAddress]) {
        guard let collection = addresses.first?.collection else { return }
        let before = idIndex.copies(of: id, in: collection) ?? []
        let keys = before.union(addresses.map(\.key))
        guard keys != before else { return }
        idIndex.setCopies(keys, of: id, in: collection)
        let error = duplicateError(collection: collection, granularity: addresses[0].granularity, id: id, keys: keys)
        report(.error, error.message, path: error.path.map { path in error.line.map { "\(path):\($0):\(error.column ?? 1)" } ?? path })
    }

    /// After `address` stopped holding `id`.
    func forgetCopy(of id: String, in address: PartitionAddress) {
        let collection = address.collection
        guard var keys = idIndex.copies(of: id, in: collection) else { return }
        keys.remove(address.key)
        if keys.count > 1 {
            idIndex.setCopies(keys, of: id, in: collection)
        } else {
            idIndex.setCopies(nil, of: id, in: collection)
            if let remaining = keys.first { idIndex.place(id, at: remaining, in: collection) }
        }
    }

    /// Throws if `id` is known to be in more than one file, after checking the files again (a
    /// person may have deleted a copy since).
    func refuseDuplicate(collection: String, granularity: PartitionGranularity, id: String) throws(FolioError) {
        guard let keys = idIndex.copies(of: id, in: collection) else { return }
        for key in keys.sorted() {
            let address = PartitionAddress(collection: collection, granularity: granularity, key: key)
            do {
                let partition = try partition(address)
                if partition.entities[id] == nil { forgetCopy(of: id, in: address) }
            } catch let error where error.code == .corruptFile {
                continue
            }
        }
        guard let now = idIndex.copies(of: id, in: collection), now.count > 1 else { return }
        throw duplicateError(collection: collection, granularity: granularity, id: id, keys: now)
    }

    /// The error naming every file that holds `id`, located at the entity in the first one.
    private func duplicateError(collection: String, granularity: PartitionGranularity, id: String, keys: Set<PartitionKey>) -> FolioError {
        let paths = keys.sorted().map { PartitionAddress(collection: collection, granularity: granularity, key: $0).path }
        var position: JSONKeyLocator.Position?
        do throws(FolioError) {
            if let (bytes, _) = try fileSystem.read(paths[0]) { position = JSONKeyLocator(bytes).position(of: ["entities", id]) }
        } catch {
            // Unreadable now: the error names the files without a line.
        }
        return FolioError(
            .corruptFile,
            "entity \"\(id)\" is in \(paths.count) files (\(paths.joined(separator: ", "))): an entity lives in exactly one partition file; Folio neither reads nor writes it until you delete the copy that is wrong",
            path: paths[0], line: position?.line, column: position?.column, entityID: id)
    }

    /// The ids a query's scan found in more than one of its partitions (or known to be in another
    /// file too), noted as duplicates.
    func duplicateIDs(_ scan: DuplicateScan) -> Set<String> {
        var found: Set<String> = []
        for (id, first, second) in scan.pairs {
            found.insert(id)
            noteDuplicate(id, in: [first, second])
        }
        guard let known = idIndex.copies(in: scan.collection), let granularity = scan.granularity else { return found }
        for id in known.keys.sorted() where !found.contains(id) && !known[id]!.isDisjoint(with: scan.keys) {
            // Known from the index: the other copy may be outside this selection.
            do { try refuseDuplicate(collection: scan.collection, granularity: granularity, id: id) } catch { found.insert(id) }
        }
        return found
    }
}
