extension Store {
    /// Replaces a damaged journal (``JournalDamage``, or a record that validates but cannot be
    /// applied) by one that holds exactly its records that validate and decode, in order and
    /// renumbered consecutively; the damaged journal moves to `.folio/quarantine/`. Only with the
    /// writers' lock held. The next open replays the new journal as usual.
    ///
    /// What is salvaged: every record before the damage (they committed), and every later record
    /// whose checksum holds under the journal's generation (Folio wrote it whole; each transaction
    /// is applied whole or not at all). What is lost: the transactions in the damaged bytes; the
    /// action's message gives their offsets, and the quarantined copy keeps them.
    static func salvageJournal(in fileSystem: FileSystem) throws(FolioError) -> RecoveryReport.Action {
        guard let (bytes, _) = try fileSystem.read(StoreLayout.journal), let (header, payloads) = Journal.salvage(bytes) else {
            let target = try quarantine(StoreLayout.journal, in: fileSystem)
            return .init(kind: .quarantined, path: StoreLayout.journal, message: "moved to \(target): too short to hold a record")
        }
        var records: [JournalRecord] = []
        var undecodable = 0
        for payload in payloads {
            let number = header.firstTransaction + UInt64(records.count)
            do throws(FolioError) {
                records.append(try JournalRecord.decode(transaction: number, payload: payload))
            } catch {
                undecodable += 1
            }
        }
        var fresh = Journal.encode(header)
        for record in records { fresh += Journal.encode(record, generation: header.generation) }
        let target = try quarantine(StoreLayout.journal, in: fileSystem)
        try AtomicFile(fileSystem: fileSystem).replace(StoreLayout.journal, with: fresh)
        try fileSystem.syncDirectory(StoreLayout.machinery)

        let damage = Journal.decodeHeader(bytes) == nil ? "its header is damaged" : "it is damaged"
        let skipped = undecodable == 0 ? "" : "; \(undecodable) record(s) validated but could not be applied and were left out"
        return .init(
            kind: .salvagedJournal, path: StoreLayout.journal,
            message:
                "\(damage): kept the \(records.count) transaction(s) that validate (written to the files next)\(skipped); transactions in the damaged bytes are lost; the damaged journal is in \(target)"
        )
    }
}
