/// Damage inside the journal, as opposed to a torn tail.
///
/// A power cut or a crash can only leave the journal's **tail** incomplete: the records after the
/// last sync, which no `write` acknowledged. Their lost sectors read as zeros (the file grew past
/// them but their data never reached the disk). Damage is anything else: bytes that do not form a
/// record, followed by a valid record, with no lost (all-zero) sector between them; or a header
/// that fails its checksum with records after it. Neither can come from a crash, so Folio cannot
/// tell which transactions committed. It refuses to guess: opening fails with
/// ``FolioError/Code/corruptJournal`` naming the offsets, the journal is kept as it is (a copy
/// goes to `.folio/quarantine/`), `folio verify` fails, and `folio recover` salvages the records
/// that validate (FORMAT.md, "Journal").
struct JournalDamage: Sendable, Equatable {
    /// Where the unreadable bytes start (a file offset).
    var offset: Int64
    /// Where the next valid record starts, or nil for a damaged header.
    var nextValidOffset: Int64?
    /// Why the bytes at `offset` are not a record.
    var reason: String

    var description: String {
        if let nextValidOffset {
            return
                "damaged at byte \(offset) (\(reason)) and a valid record follows at byte \(nextValidOffset): this is not a torn tail left by a crash, so Folio cannot tell which transactions committed and will not guess"
        }
        return "the header is damaged (\(reason)) and records follow it: Folio cannot tell which transactions committed and will not guess"
    }

    func error() -> FolioError {
        FolioError(
            .corruptJournal, "\(description). The journal is left as it is; run `folio recover` to apply the transactions that validate (docs/CLI.md)",
            path: StoreLayout.journal)
    }
}

extension Journal {
    /// The largest transaction-number gap a record found after damage may have (any more and the
    /// bytes are taken as chance, not a record).
    private static let plausibleGap: UInt64 = 1 << 32

    /// The offset of the first record at or after `start` that validates under `seed` and carries
    /// a transaction number of at least `minimum`, or nil.
    static func nextValidRecord(in bytes: [UInt8], from start: Int, seed: UInt32, minimum: UInt64) -> Int? {
        var position = start
        while position + recordHeaderSize <= bytes.count {
            defer { position += 1 }
            let transaction = bytes.loadLittleEndian(UInt64.self, at: position + 8)
            guard transaction >= minimum, transaction - minimum < plausibleGap else { continue }
            let length = Int(bytes.loadLittleEndian(UInt32.self, at: position))
            guard length <= maximumPayload, bytes.count - position - recordHeaderSize >= length else { continue }
            if checksumHolds(bytes, at: position, length: length, seed: seed) { return position }
        }
        return nil
    }

    /// Whether the bytes `start..<end` (at file offset `baseOffset + start`) contain a sector lost
    /// by a power cut: a 512-byte sector whose part in the range is all zeros. Records are JSON
    /// with a header, so a damaged record never has one.
    static func containsLostSector(_ bytes: [UInt8], from start: Int, to end: Int, baseOffset: Int64) -> Bool {
        var position = start
        while position < end {
            let inSector = 512 - Int((baseOffset + Int64(position)) % 512)
            let sectorEnd = min(end, position + inSector)
            if bytes[position..<sectorEnd].allSatisfy({ $0 == 0 }) { return true }
            position = sectorEnd
        }
        return false
    }

    /// Classifies the bytes from `position` on, where reading stopped: nil for a torn tail (no
    /// valid record after it, or a lost sector before the next one), else the damage.
    static func damage(
        in bytes: [UInt8], at position: Int, baseOffset: Int64, generation: UInt64,
        expected: UInt64, reason: String
    ) -> JournalDamage? {
        guard let next = nextValidRecord(in: bytes, from: position, seed: seed(generation), minimum: expected),
            !containsLostSector(bytes, from: position, to: next, baseOffset: baseOffset)
        else { return nil }
        return JournalDamage(offset: baseOffset + Int64(position), nextValidOffset: baseOffset + Int64(next), reason: reason)
    }

    /// For a whole journal file whose header does not validate: the damage, when bytes other than
    /// zeros follow the header (a crash never leaves that: the header is written and synced in
    /// one sector before any record), else nil.
    static func headerDamage(in file: [UInt8]) -> JournalDamage? {
        guard file.count > headerSize, decodeHeader(file) == nil,
            file[headerSize...].contains(where: { $0 != 0 })
        else { return nil }
        let reason = file.starts(with: Array("FOLIOJ01".utf8)) ? "checksum mismatch" : "no FOLIOJ01 magic"
        return JournalDamage(offset: 0, nextValidOffset: nil, reason: reason)
    }

    /// Every record of a damaged journal that validates, in order: the records before the damage,
    /// then each later one whose checksum holds under the header's generation. For a damaged
    /// header, the generation is read from its bytes as they are (a damaged generation validates
    /// nothing, and nothing is salvaged).
    /// - Returns: The header to write a clean journal with, and the payloads of the records.
    static func salvage(_ file: [UInt8]) -> (header: Header, payloads: [[UInt8]])? {
        guard file.count >= headerSize else { return nil }
        let header =
            decodeHeader(file)
            ?? Header(
                generation: file.loadLittleEndian(UInt64.self, at: 8),
                firstTransaction: file.loadLittleEndian(UInt64.self, at: 16),
                nextSequence: file.loadLittleEndian(UInt64.self, at: 24))
        let bytes = Array(file[headerSize...])
        let seed = seed(header.generation)
        var payloads: [[UInt8]] = []
        var position = 0
        var minimum = header.firstTransaction
        while let found = nextValidRecord(in: bytes, from: position, seed: seed, minimum: minimum) {
            let length = Int(bytes.loadLittleEndian(UInt32.self, at: found))
            payloads.append(Array(bytes[(found + recordHeaderSize)..<(found + recordHeaderSize + length)]))
            minimum = bytes.loadLittleEndian(UInt64.self, at: found + 8) + 1
            position = found + recordHeaderSize + length
        }
        return (header, payloads)
    }
}

extension Journal {
    /// Throws when the header does not validate and records follow it (see ``headerDamage(in:)``).
    func checkHeader() throws(FolioError) {
        let size = try size
        guard size > Int64(Self.headerSize) else { return }
        if let damage = Self.headerDamage(in: try read(at: 0, count: Int(size))) { throw damage.error() }
    }
}

extension FolioError {
    /// For an error about the journal's contents: the same error, after keeping a copy of the
    /// journal in `.folio/quarantine/` (named by its checksum, so opening again does not pile up
    /// copies). If the copy cannot be written (a full or read-only disk), the error says so; the
    /// journal itself is never touched.
    func keepingCopyOfJournal(_ fileSystem: FileSystem) -> FolioError {
        guard code == .corruptJournal else { return self }
        do throws(FolioError) {
            guard let (bytes, _) = try fileSystem.read(StoreLayout.journal) else { return self }
            let hex = String(CRC32C.checksum(bytes), radix: 16)
            let copy = FolderScan.quarantineFolder + "/journal-" + String(repeating: "0", count: 8 - hex.count) + hex
            if try fileSystem.identity(copy) == nil {
                try fileSystem.makeDirectoryDurably(FolderScan.quarantineFolder)
                try AtomicFile(fileSystem: fileSystem).replace(copy, with: bytes)
                try fileSystem.syncDirectory(FolderScan.quarantineFolder)
            }
            return FolioError(code, "\(message) (a copy of the journal is in \(copy))", path: path)
        } catch {
            return FolioError(code, "\(message) (no copy of the journal could be kept: \(error.message))", path: path)
        }
    }
}
