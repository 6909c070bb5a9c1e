/// `.folio/`: retry bookkeeping, sync cursors, indexes, temp files, quarantine.
extension FolderScan {
    static let quarantineFolder = StoreLayout.machinery + "/quarantine"

    func checkMachinery() throws {
        for entry in list(StoreLayout.machinery) {
            let path = StoreLayout.machinery + "/" + entry.name
            switch (path, entry.isDirectory) {
            case (StoreLayout.lockFile, false), (StoreLayout.journal, false),
                (MachineryIgnore.path, false),   // keeps .folio/ out of git; a person may change it
                (WrittenLog.path, false),   // checked by checkCopy (FolderScan+Copy.swift)
                (OutboxEntityIndex.path, false),   // derived: which outbox commands are each entity's; used only for its generation
                (KeptVersions.folder, true):   // derived: the versions a save from an older buffer is merged against
                continue
            case (StoreLayout.lockFile, true), (StoreLayout.journal, true):
                report(.error, .machinery, path, FileSystem.directoryInstead(of: path).message + "; the store will not open until it is a file")
            case (Store.attemptsFile, false): checkAttempts()
            case (Store.syncFile, false): checkSyncFile()
            case (OutboxBook.sentMarkFile, false): checkSentMark()
            case (WriterID.path, false): checkWriterID()
            case (StoreLayout.machinery + "/index", true): checkIndexes()
            case (StoreLayout.tempFolder, true):
                for file in list(StoreLayout.tempFolder) {
                    let tempPath = StoreLayout.tempFolder + "/" + file.name
                    leftoverTempFiles.append(tempPath)
                    report(
                        .warning, .tempFile, tempPath,
                        "a temp file of an atomic replace: left by a crash (or a write in progress); opening the store or `folio recover` removes it")
                }
            case (MigrationCommit.folder, true):
                let committed = Platform.identity(atPath: fileSystem.absolute(MigrationCommit.commitFile)).0 != nil
                report(
                    .warning, .tempFile, path,
                    committed
                        ? "a migration interrupted after its commit: the next open finishes it (the store is the migrated one)"
                        : "a migration interrupted before its commit: the next open discards it (the store is the old one)")
            case (Self.quarantineFolder, true):
                checkQuarantine(
                    Self.quarantineFolder,
                    what: "moved aside by `folio recover` because it could not be read: repair it, then merge it back by hand (see docs/CLI.md)")
            default:
                report(.note, .strayFile, path, "not part of the format: Folio ignores it")
            }
        }
    }

    func checkAttempts() {
        let path = Store.attemptsFile
        guard let bytes = readFile(path) else { return }
        let advisory = "advisory: Folio starts the attempt counts again; `folio recover` moves it aside"
        guard let value = parseJSON(path, bytes, severity: .warning, what: advisory) else {
            unreadableFiles.append(path)
            return
        }
        guard case .object(let entries) = value else {
            report(.warning, .machinery, path, at: .init(line: 1, column: 1), "expected an object from command number to attempts; " + advisory)
            unreadableFiles.append(path)
            return
        }
        let locator = JSONKeyLocator(bytes)
        for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
            guard let sequence = CommandFileName.sequence(fromFileName: key + ".json"), let parsed = CommandAttempts(json: entry) else {
                report(
                    .warning, .machinery, path, at: locator.position(of: [key]),
                    "entry \"\(key)\" is not a 20-digit command number with an integer \"count\": Folio ignores it")
                continue
            }
            attempts[sequence] = parsed
        }
    }

    /// `.folio/sent.json` is not advisory, but a damaged one is safe: the store then treats every
    /// pending command as possibly sent (and coalesces none of them).
    private func checkSentMark() {
        let path = OutboxBook.sentMarkFile
        guard let bytes = readFile(path) else { return }
        let consequence = "the store treats every pending command as possibly sent (safe; nothing already queued is coalesced)"
        guard let value = parseJSON(path, bytes, severity: .warning, what: consequence) else { return }
        if value["sentThrough"]?.sequenceValue == nil {
            report(.warning, .machinery, path, at: .init(line: 1, column: 1), "expected {\"sentThrough\": <command number>}; " + consequence)
        }
    }

    /// `.folio/writer.json` names this folder instance's writer id (the prefix of its new commands'
    /// idempotency keys) with the identity of the lock it was made beside. A damaged one, or one
    /// of another folder (a copy), is harmless: the next open makes a new writer id.
    private func checkWriterID() {
        let path = WriterID.path
        guard let bytes = readFile(path) else { return }
        let consequence = "the next read-write open makes a new writer id (harmless: only new commands get it)"
        guard let value = parseJSON(path, bytes, severity: .warning, what: consequence) else { return }
        guard let record = WriterID.Record(value) else {
            report(.warning, .machinery, path, at: .init(line: 1, column: 1), WriterID.Record.expected + "; " + consequence)
            return
        }
        if let lock = Platform.identity(atPath: fileSystem.absolute(StoreLayout.lockFile)).0, !record.names(lock) {
            report(
                .note, .machinery, path, at: .init(line: 1, column: 1),
                "names the lock of another folder: this folder is a copy, and its next read-write open makes it a writer of its own")
        }
    }

    func checkSyncFile() {
        let path = Store.syncFile
        guard let bytes = readFile(path) else { return }
        let advisory = "losing it only means the next changes pull starts from the beginning; `folio recover` moves it aside"
        guard let value = parseJSON(path, bytes, severity: .warning, what: advisory) else {
            unreadableFiles.append(path)
            return
        }
        guard value.objectValue != nil else {
            report(.warning, .machinery, path, at: .init(line: 1, column: 1), "expected {\"cursors\": {\"<collection>\": \"<cursor>\"}}; " + advisory)
            unreadableFiles.append(path)
            return
        }
        guard let stored = value["cursors"] else { return }
        guard case .object(let pairs) = stored else {
            report(.warning, .machinery, path, at: JSONKeyLocator(bytes).position(of: ["cursors"]), "\"cursors\" must be an object; " + advisory)
            unreadableFiles.append(path)
            return
        }
        for (collection, cursor) in pairs {
            if let text = cursor.stringValue { cursors[collection] = text }
        }
    }

    /// The derived indexes, a collection's id index (`index/<collection>`) and field index
    /// (`index/<collection>.fields`): one whose every part does not check out is damaged.
    private func checkIndexes() {
        let folder = StoreLayout.machinery + "/index"
        for entry in list(folder) {
            let path = folder + "/" + entry.name
            let isFieldIndex = entry.name.hasSuffix(FieldIndexFile.suffix)
            let collection = isFieldIndex ? String(entry.name.dropLast(FieldIndexFile.suffix.count)) : entry.name
            do {
                try Names.validateCollection(collection)
            } catch {
                report(.note, .strayFile, path, "not an index file (\(error.message)): Folio ignores it")
                continue
            }
            guard let bytes = readFile(path) else { continue }
            let intact: Bool
            if isFieldIndex {
                if let older = FieldIndexFile.olderFormat(bytes) {
                    report(
                        .note, .machinery, path, at: .init(line: 1, column: 1),
                        "a field index of an older format (\(older)): Folio writes it anew at the next query that needs it")
                    continue
                }
                intact = FieldIndexFile.isIntact(fileSystem, collection: collection)
            } else {
                // Damaged exactly when the store ignores it: the bytes just read, walked as the store does.
                intact = bytes.withUnsafeBufferPointer { buffer in IndexFile.walk(buffer) { _, _ in } }
            }
            if !intact {
                report(
                    .warning, .machinery, path, at: .init(line: 1, column: 1),
                    "a damaged \(isFieldIndex ? "field index" : "index") (derived data): Folio ignores it and rebuilds it when needed; `folio recover` deletes it"
                )
                damagedDerivedFiles.append(path)
            }
        }
    }
}
