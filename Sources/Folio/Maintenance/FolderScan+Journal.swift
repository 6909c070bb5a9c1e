/// The journal, read as FORMAT.md specifies it, without opening it for writing.
extension FolderScan {
    func checkJournal() throws {
        let path = StoreLayout.journal
        // No journal (a backup, a store copied without .folio/) holds nothing: nothing to say.
        guard try fileSystem.identity(path) != nil else { return }
        guard let bytes = readFile(path) else { return }
        journal.size = Int64(bytes.count)
        if bytes.isEmpty { return }
        func damaged(_ damage: JournalDamage) {
            journal.damage = damage
            report(
                .error, .journal, path,
                "\(damage.description): the store will not open; `folio recover` applies the transactions that validate and keeps the journal in .folio/quarantine/"
            )
        }
        guard let header = Journal.decodeHeader(bytes) else {
            if let damage = Journal.headerDamage(in: bytes) {
                damaged(damage)
                return
            }
            report(
                .note, .journal, path,
                "the header is incomplete or fails its checksum: the journal holds nothing that is not in the files already (a new journal, or a reset cut short); the next open writes a new header"
            )
            return
        }
        journal.header = header
        let result: Journal.ReadResult
        do {
            result = try Journal.parseRecords(
                Array(bytes[Journal.headerSize...]), baseOffset: Int64(Journal.headerSize),
                generation: header.generation, expectedTransaction: header.firstTransaction)
        } catch {
            report(
                .error, .journal, path,
                "\(error.message): Folio cannot open the store; `folio recover` moves the journal to .folio/quarantine/ (the transactions in it that are not in the files yet are then not applied)"
            )
            unreadableFiles.append(path)
            return
        }
        if let damage = result.damage { damaged(damage) }
        records = result.records
        journal.tornBytes = result.discardedBytes
        if !result.records.isEmpty {
            let numbers = "\(header.firstTransaction)–\(header.firstTransaction + UInt64(result.records.count) - 1)"
            report(
                .note, .journal, path,
                "\(result.records.count) committed transaction(s) (\(numbers)) are not in the files yet: every reader applies them, and the next checkpoint or `folio recover` writes them"
            )
        }
        if result.discardedBytes > 0 && result.damage == nil {
            report(
                .note, .journal, path,
                "\(result.discardedBytes) bytes after the last committed transaction do not form a valid record (\(result.discardedReason ?? "torn")): a transaction that never committed, normal after a crash; the next open drops them"
            )
        }
    }
}
