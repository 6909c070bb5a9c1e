/// The collections: folder layouts, partition files, entity ids.
extension FolderScan {
    /// A partitioned collection's folder: month files (`2026-11.json`) or day folders
    /// (`2026-11/2026-11-22.json`), never both.
    func checkCollectionFolder(_ collection: String) {
        var months: [PartitionKey] = []
        var dayFolders: [String] = []
        for entry in list(collection) {
            let path = collection + "/" + entry.name
            if entry.isDirectory {
                if DataFileName.month(fileName: entry.name) != nil {
                    report(.error, .badShape, path, FileSystem.directoryInstead(of: path).message + "; the store cannot read this month")
                } else if DataFileName.isMonthFolder(entry.name) {
                    dayFolders.append(entry.name)
                } else {
                    report(
                        entry.name.hasPrefix(".") ? .note : .warning, .strayFile, path,
                        "a folder that is not a month (YYYY-MM): Folio ignores it")
                }
                continue
            }
            if let key = DataFileName.month(fileName: entry.name) {
                months.append(key)
            } else if let day = DataFileName.day(fileName: entry.name) {
                report(
                    .error, .wrongPartition, path,
                    "a day file directly in the collection folder: day partitions live in \(collection)/\(day.month)/\(entry.name); Folio does not read it here"
                )
            } else {
                reportNotData(path, name: entry.name, realKey: "month (YYYY-MM, year 0001–9999)")
            }
        }
        if !months.isEmpty && !dayFolders.isEmpty {
            report(
                .error, .wrongPartition, collection,
                "collection \(collection) has both month files and day folders: a collection has one partitioning; Folio reads only the layout its entity type declares"
            )
        }
        let granularity: PartitionGranularity = dayFolders.isEmpty ? .month : .day
        if collections[collection] == nil { collections[collection] = Collection(granularity: granularity) }
        for key in months {
            checkPartitionFile(collection + "/" + key.text + ".json", collection: collection, key: key)
        }
        for month in dayFolders {
            checkDayFolder(collection, month: month)
        }
    }

    private func checkDayFolder(_ collection: String, month: String) {
        let folder = collection + "/" + month
        for entry in list(folder) {
            let path = folder + "/" + entry.name
            if entry.isDirectory {
                if DataFileName.day(fileName: entry.name) != nil {
                    report(.error, .badShape, path, FileSystem.directoryInstead(of: path).message + "; the store cannot read this day")
                } else {
                    report(entry.name.hasPrefix(".") ? .note : .warning, .strayFile, path, "a folder inside a month folder: Folio ignores it")
                }
                continue
            }
            if let key = DataFileName.day(fileName: entry.name) {
                if key.month == month {
                    checkPartitionFile(path, collection: collection, key: key)
                } else {
                    report(
                        .error, .wrongPartition, path,
                        "the day \(key.text) is in the folder of month \(month): move it to \(collection)/\(key.month)/\(entry.name); Folio does not read it here"
                    )
                }
            } else if DataFileName.month(fileName: entry.name) != nil {
                report(.error, .wrongPartition, path, "a month file inside a month folder: Folio does not read it here")
            } else {
                reportNotData(path, name: entry.name, realKey: "day (YYYY-MM-DD, a calendar date)")
            }
        }
    }

    /// A file in a collection's folders that is not a partition file: one named with the shape of
    /// a key without being a valid one (`2026-02-30`, `2026-13`), or a stray file.
    /// - Parameter realKey: What a valid key of the folder is.
    private func reportNotData(_ path: String, name: String, realKey: String) {
        let stem = DataFileName.stem(name).map(String.init)
        let shape = stem?.map { $0.isASCII && $0.isNumber ? "9" : String($0) }.joined()
        if let stem, shape == "9999-99-99" || shape == "9999-99" {
            report(.error, .invalidName, path, "\"\(stem)\" is not a real \(realKey): Folio does not read this file")
        } else {
            let stray = StrayFileProblem.classify(name)
            report(stray.severity, stray.kind, path, stray.message)
        }
    }

    /// One partition file: valid JSON, the shape of FORMAT.md, valid ids, each entity an object
    /// whose own `id` (if it has one) matches the key it is stored under.
    func checkPartitionFile(_ path: String, collection: String, key: PartitionKey) {
        guard let bytes = readFile(path, skipped: "it is not checked") else { return }
        let what =
            "Folio does not read or overwrite this file until it is fixed (its entities are missing from the store meanwhile); `folio recover` moves it to .folio/quarantine/"
        guard let value = parseJSON(path, bytes, what: what) else {
            unreadableFiles.append(path)
            return
        }
        // The schema is the store's own (PartitionFile), so verify passes exactly what Folio reads.
        let problems = PartitionFile.problems(in: value, bytes: bytes, path: path)
        for problem in problems {
            report(
                .error, problem.kind == .badID ? .invalidName : .badShape, path,
                at: .init(line: problem.error.line ?? 1, column: problem.error.column ?? 1),
                "\(problem.error.message); Folio does not read this file until it is fixed")
        }
        guard problems.isEmpty, case .object(let entities)? = value["entities"] else {
            unreadableFiles.append(path)
            return
        }
        let locator = JSONKeyLocator(bytes)
        var ids: Set<String> = []
        var positions: [String: JSONKeyLocator.Position] = [:]
        for (id, entity) in entities.sorted(by: { $0.key < $1.key }) {
            let position = locator.position(of: ["entities", id])
            positions[id] = position
            ids.insert(id)
            let ownID: String?
            switch entity["id"] {
            case .string(let text)?, .number(let text)?: ownID = text
            default: ownID = nil
            }
            for number in NumberCulprit.outOfRange(in: entity) {
                report(
                    .error, .badShape, path, at: locator.position(of: ["entities", id] + number.path.prefix(1)) ?? position,
                    "entity \"\(id)\": \(number.message); the app cannot read this entity until it is fixed")
            }
            if let ownID, ownID != id {
                report(
                    .error, .badShape, path, at: locator.position(of: ["entities", id, "id"]) ?? position,
                    "entity stored under \"\(id)\" says its id is \"\(ownID)\": an entity is stored under its own id; rename the key or fix the field")
            }
        }
        if entities.isEmpty {
            report(.note, .badShape, path, "no entities: Folio removes an empty partition's file (harmless)")
        }
        checkRevision(path, value: value, bytes: bytes)
        entitiesChecked += ids.count
        collections[collection]?.files[key] = ids
        collections[collection]?.positions[key] = positions
    }

    /// Ids held by two partition files of one collection, once the journal's records are applied
    /// (a checkpoint cut short may leave a moved entity in both files; its record settles that).
    func checkDuplicateIDs() {
        for (name, collection) in collections.sorted(by: { $0.key < $1.key }) where collection.granularity != .none {
            var places: [String: Set<PartitionKey>] = [:]
            for (key, ids) in collection.files {
                for id in ids { places[id, default: []].insert(key) }
            }
            for change in records.flatMap(\.changes) where change.address.collection == name {
                if change.entity != nil {
                    places[change.id, default: []].insert(change.address.key)
                } else {
                    places[change.id]?.remove(change.address.key)
                }
            }
            for (id, keys) in places.sorted(by: { $0.key < $1.key }) where keys.count > 1 {
                let paths = keys.sorted().map { StoreLayout.path(collection: name, granularity: collection.granularity, key: $0) }
                for key in keys.sorted() {
                    guard let position = collection.positions[key]?[id] else { continue }
                    let path = StoreLayout.path(collection: name, granularity: collection.granularity, key: key)
                    let others = paths.filter { $0 != path }.joined(separator: ", ")
                    report(
                        .error, .duplicateID, path, at: position,
                        "entity \"\(id)\" is also in \(others): an entity lives in exactly one partition file; delete the copy that is wrong")
                }
            }
        }
    }

    /// The committed entity count of each partition: the files with the journal's records applied.
    func committedPartitions() -> [String: [PartitionKey: Int]] {
        var result: [String: [PartitionKey: Set<String>]] = [:]
        for (name, collection) in collections { result[name] = collection.files }
        for change in records.flatMap(\.changes) {
            let address = change.address
            if change.entity != nil {
                result[address.collection, default: [:]][address.key, default: []].insert(change.id)
            } else {
                result[address.collection]?[address.key]?.remove(change.id)
            }
        }
        return result.mapValues { partitions in partitions.mapValues(\.count).filter { $0.value > 0 } }
    }

    /// A data file whose base Folio will not know when it reads it (FORMAT.md, "Revisions"): a
    /// malformed `revision`, or none (nor one Folio keeps) in a file whose history has revisions.
    /// Folio then merges it without deleting anything; the warning says so before it happens.
    private func checkRevision(_ path: String, value: JSONValue, bytes: [UInt8]) {
        guard case .object(var members) = value else { return }
        let named = members["revision"] != nil || members["ancestors"] != nil
        let revision = Revision.take(from: &members)
        if named && revision == nil {
            report(
                .warning, .unknownBase, path, at: JSONKeyLocator(bytes).position(of: ["revision"]) ?? .init(line: 1, column: 1),
                "\"revision\" is not \"<writer>:<number>:<hash>\" (or \"ancestors\" not writer → number): Folio reads this file with an unknown base, adding and updating its entities but deleting none"
            )
            return
        }
        guard revision == nil else { return }
        let versions: [KeptVersions.Version]
        do { versions = try KeptVersions(fileSystem: fileSystem).versions(of: path) } catch { return }
        let hash = ContentHash(bytes)
        guard versions.contains(where: { $0.writer != nil }), !versions.contains(where: { $0.hash == hash }) else { return }
        report(
            .warning, .unknownBase, path,
            "names no revision (it was written afresh, or its \"revision\" was removed): Folio reads it with an unknown base, adding and updating its entities but deleting none"
        )
    }
}
