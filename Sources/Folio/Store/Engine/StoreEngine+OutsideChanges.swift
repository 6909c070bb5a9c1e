/// Noticing changes made to the folder by anything but this process's writes.
extension StoreEngine {
    /// Reloads the partitions whose files changed at `paths` (nil: every partition read so far),
    /// noting what changed; the journal has been refreshed by the caller. Files that are not data
    /// are reported once each (a conflict copy as a warning).
    func checkOutsideChanges(_ paths: Set<String>?) throws(FolioError) {
        guard let paths else {
            for address in partitions.addresses { try checkPartition(address) }
            return
        }
        for path in paths.sorted() where !path.hasPrefix(StoreLayout.machinery + "/") {
            if let address = partitionAddress(of: path) {
                try checkPartition(address)
            } else if let identity = try fileSystem.identity(path), identity.isDirectory {
                // A folder came (a new month): its files may have been written before the watcher
                // watched it, so they are looked for, besides what was read from it.
                let prefix = path + "/"
                var addresses = Set(partitions.addresses.filter { $0.path.hasPrefix(prefix) })
                for file in try dataFiles(under: path) { if let address = partitionAddress(of: file) { addresses.insert(address) } }
                for address in addresses.sorted() { try checkPartition(address) }
            } else if try fileSystem.identity(path) == nil {
                // A folder went (or a file that is gone): check what was read from it.
                let prefix = path + "/"
                for address in partitions.addresses where address.path.hasPrefix(prefix) { try checkPartition(address) }
            } else if fileIsInDataFolder(path),
                let stray = StrayFile.classify(path: path, isData: { partitionAddress(of: $0) != nil })
            {
                reportStray(stray)
            }
        }
    }

    /// Another process checkpointed records this one never read, and the journal no longer holds
    /// them: reloads the partitions whose files a checkpoint wrote after `transaction` (from
    /// `.folio/written`), so that what changed is announced now. Waiting for the folder watcher is
    /// not enough: a read may load such a file first, and a first load announces nothing.
    /// Without a readable log, the partitions read so far are checked.
    func checkFilesCheckpointed(after transaction: UInt64) throws(FolioError) {
        guard let log = writtenHashes.current(fileSystem, fileLoads: .max) else {
            try checkOutsideChanges(nil)
            return
        }
        let paths = log.paths(writtenAfter: transaction)
        for address in Set(paths.compactMap(partitionAddress(of:))).sorted() { try checkPartition(address) }
    }

    /// Reloads one partition if its file changed; one this process never read is read now, and
    /// its entities announced (as updated, or inserted when the id index knows they are new).
    private func checkPartition(_ address: PartitionAddress) throws(FolioError) {
        // A partition read before notes what changed as it is read again; a new one is told
        // apart from what the id index knew.
        let isNew = !partitions.contains(address) && partitions.departed[address] == nil
        let index = isNew ? locator.locations(in: address.collection) : nil
        let known = isNew ? Set(locator.ids(at: address) ?? []) : []
        let loaded: Partition
        do { loaded = try partition(address) } catch let error where error.code == .corruptFile {
            report(.error, "\(error.description); not read", path: address.path)
            return
        }
        guard isNew, feed.isTracking else { return }
        var changeSet = ChangeSet(collection: address.collection, partitions: [address.key.text], origin: outsideOrigin(of: loaded))
        for id in loaded.entities.keys {
            if index != nil && index?.key(of: id) == nil && !known.contains(id) { changeSet.inserted.insert(id) } else { changeSet.updated.insert(id) }
        }
        for id in known where loaded.entities[id] == nil { changeSet.deleted.insert(id) }
        feed.record(changeSet)
    }

    /// The `.json` files in a folder and its subfolders (two levels: a collection, a month).
    private func dataFiles(under folder: String, depth: Int = 2) throws(FolioError) -> [String] {
        var found: [String] = []
        for entry in try fileSystem.list(folder) {
            let path = folder + "/" + entry.name
            if entry.isDirectory {
                if depth > 1 { found += try dataFiles(under: path, depth: depth - 1) }
            } else if entry.name.hasSuffix(".json") {
                found.append(path)
            }
        }
        return found
    }

    /// The partition a data file path names, if it is one: `tags.json`, `dailyStats/2026-11.json`,
    /// `todos/2026-11/2026-11-22.json`. A collection registered with another layout is not one.
    func partitionAddress(of path: String) -> PartitionAddress? {
        guard let address = DataFileName.address(of: path) else { return nil }
        if let known = collections[address.collection], known != address.granularity { return nil }
        return address
    }

    /// Whether a path is a file where data files live: the store's folder, a collection's folder
    /// or one of its month folders (not `.folio/`, not `outbox/`).
    func fileIsInDataFolder(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 3, let first = parts.first, !first.hasPrefix("."), first != "outbox" || parts.count == 1 else { return false }
        return parts.count == 1 ? path != StoreLayout.marker : true
    }

    func reportStray(_ stray: StrayFile) {
        guard feed.isFirstReport(ofStray: stray.path) else { return }
        switch stray.kind {
        case .conflictCopy(let original):
            report(.warning, "conflict copy of \(original): never read as data; merge what you need into \(original) and delete it", path: stray.path)
        case .temporary, .editorBackup, .unrecognized:
            report(.debug, stray.description, path: stray.path)
        }
    }

    /// Every file among the data folders that is not a data file.
    func strayFiles() throws(FolioError) -> [StrayFile] {
        var result: [StrayFile] = []
        func check(_ path: String) {
            if let stray = StrayFile.classify(path: path, isData: { partitionAddress(of: $0) != nil }) { result.append(stray) }
        }
        for entry in try fileSystem.list("") {
            guard entry.isDirectory else {
                if entry.name != StoreLayout.marker { check(entry.name) }
                continue
            }
            guard !entry.name.hasPrefix("."), entry.name != "outbox" else { continue }
            do { try Names.validateCollection(entry.name) } catch { continue }
            for child in try fileSystem.list(entry.name) {
                let path = entry.name + "/" + child.name
                guard child.isDirectory else { check(path); continue }
                guard PartitionKey.month(parsing: child.name) != nil else { continue }
                for file in try fileSystem.list(path) where !file.isDirectory { check(path + "/" + file.name) }
            }
        }
        return result.sorted { $0.path < $1.path }
    }
}
