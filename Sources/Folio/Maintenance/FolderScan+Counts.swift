/// Each partition's ids, for `status`'s entity counts, without checking the files: from the saved
/// id index (`.folio/index/<collection>`) where a file still has the identity the index recorded
/// (as the store itself trusts it), else from the file, parsed. The journal's records are applied
/// on top by ``committedPartitions()``, which is why ids are kept, not counts.
extension FolderScan {
    func countPartitions() {
        for entry in list("") {
            let name = entry.name
            if name == StoreLayout.marker || name == StoreLayout.machinery || name == OutboxBook.folder { continue }
            if entry.isDirectory {
                if Self.isCollectionName(name) { countCollectionFolder(name) }
            } else if let stem = DataFileName.stem(name).map(String.init), Self.isCollectionName(stem), !name.hasPrefix(".") {
                collections[stem] = Collection(granularity: .none)
                countFile(name, collection: stem, key: .whole, indexed: nil)
            }
        }
    }

    /// A partitioned collection: month files, or day files in month folders (as the full scan,
    /// day partitions when there is any month folder).
    private func countCollectionFolder(_ collection: String) {
        var files: [(path: String, key: PartitionKey)] = []
        var hasDayFolders = false
        for entry in list(collection) {
            let path = collection + "/" + entry.name
            if entry.isDirectory {
                guard DataFileName.isMonthFolder(entry.name) else { continue }
                hasDayFolders = true
                for day in list(path) where !day.isDirectory {
                    if let key = DataFileName.day(fileName: day.name, inMonthFolder: entry.name) { files.append((path + "/" + day.name, key)) }
                }
            } else if let key = DataFileName.month(fileName: entry.name) {
                files.append((path, key))
            }
        }
        if collections[collection] == nil { collections[collection] = Collection(granularity: hasDayFolders ? .day : .month) }
        var index: [PartitionKey: IndexFile.Entry] = [:]
        do {
            index = try IndexFile.read(fileSystem, collection: collection)
        } catch {
            report(.warning, .unreadable, IndexFile.path(collection), "cannot be read (\(error.message)): every file of \(collection) is counted from itself")
        }
        for (path, key) in files {
            countFile(path, collection: collection, key: key, indexed: index[key])
        }
    }

    /// Records a file's ids in `collections[collection]`, which the caller registered.
    private func countFile(_ path: String, collection: String, key: PartitionKey, indexed: IndexFile.Entry?) {
        if let indexed {
            do {
                if try fileSystem.identity(path) == indexed.identity {
                    collections[collection]?.files[key] = Set(indexed.ids)
                    return
                }
            } catch {
                // Without its identity the index cannot vouch for the file: it is counted from its
                // bytes, as a file the index does not list (a failing read is reported there).
                report(.warning, .unreadable, path, "cannot be examined (\(error.message)): counted from the file itself")
            }
        }
        guard let bytes = readFile(path, skipped: "its entities are not counted") else { return }
        let what = "Folio does not read this file until it is fixed (its entities are missing from the store meanwhile)"
        guard let value = parseJSON(path, bytes, what: what) else { return }
        // The store's own schema decides, as in the full scan: a file it refuses holds nothing.
        if let problem = PartitionFile.problems(in: value, bytes: bytes, path: path).first {
            report(
                .error, problem.kind == .badID ? .invalidName : .badShape, path,
                at: .init(line: problem.error.line ?? 1, column: problem.error.column ?? 1), "\(problem.error.message); \(what)")
            return
        }
        guard case .object(let entities)? = value["entities"] else {
            // The schema check above refuses such a file; should it ever let one through, status
            // says so rather than count the file as empty.
            report(.error, .badShape, path, "no \"entities\" object; \(what)")
            return
        }
        collections[collection]?.files[key] = Set(entities.keys)
    }
}
