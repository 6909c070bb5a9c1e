internal import Foundation

/// The write-ahead journal file, `.folio/journal` (FORMAT.md, "Journal", specifies the bytes).
///
/// Layout: a 40-byte header, then records back to back.
///
/// ```
/// header:  "FOLIOJ01" | generation u64 | first transaction u64 | next command u64 |
///          crc32c(bytes 0..<32) u32 | 0 u32
/// record:  payload length u32 | crc32c u32 | transaction u64 | payload (compact JSON)
/// ```
/// All integers little-endian. A record's checksum covers its transaction number and payload and
/// is seeded with the header's generation, so records left over from before a reset never
/// validate. Transaction numbers run consecutively from the header's first transaction.
///
/// **The commit point** of a transaction is the moment its record is completely on stable storage.
/// Reading stops at the first record that is short, fails its checksum, or is out of sequence: a
/// torn tail is "not committed". When a valid record follows such bytes, they are damage, not a
/// torn tail, and reading fails instead (see ``JournalDamage``).
///
/// **Free space.** Zero bytes may follow the last record. An append that passes the file's end
/// writes ``freeSpace`` zeros after its record, in the same write, and its sync makes the new size
/// durable; the commits after it overwrite zeros, so their syncs write data only, not the file's
/// size (an `fdatasync` after an overwrite costs about 60% of one after an append). Zeros are
/// not a torn tail; a reset cuts the file back to its header.
///
/// All mutation happens with the writers' flock held (see ``FileLock``); readers in other processes
/// read without it and simply ignore a tail that is still being written.
final class Journal {
    static let headerSize = 40
    static let recordHeaderSize = 16
    static let maximumPayload = 256 << 20
    /// The zeros an append that passes the file's end writes after its record: 64 KiB, the file's
    /// new size rounded up to a whole 4 KiB page.
    ///
    /// `FOLIO_JOURNAL_FREE_SPACE` (bytes, read once per process) selects another growth strategy,
    /// for tests and measurements: `0` is a plain append (the file grows by each record and holds
    /// no zeros, as before free space); a multiple of 4096 is rounded up to a page as the default
    /// is; any other size is written exactly (`100`: most records straddle the free space's end,
    /// part over zeros, part growing the file). A value that is not a number, is negative or is
    /// over 64 MiB keeps the default. Readers take every strategy, and processes with different
    /// ones may share a journal: it changes only where this process's appends leave the file's
    /// end, never what a reader makes of the bytes (JournalGrowthObservationTests).
    static let freeSpace: Int = {
        guard let text = ProcessInfo.processInfo.environment["FOLIO_JOURNAL_FREE_SPACE"],
            let bytes = Int(text.trimmingCharacters(in: .whitespaces)), (0...(64 << 20)).contains(bytes)
        else { return 64 << 10 }
        return bytes
    }()
    /// What a read past the cursor takes first: most find nothing new, or a record or two.
    static let firstReadSize = 4096
    private static let magic = Array("FOLIOJ01".utf8)

    struct Header: Equatable {
        var generation: UInt64
        var firstTransaction: UInt64
        /// The outbox sequence number the next enqueued command gets (before this generation's
        /// records, which may enqueue more).
        var nextSequence: UInt64
    }

    /// What a read of the record area found.
    struct ReadResult {
        var records: [JournalRecord]
        /// Offset just past the last valid record.
        var end: Int64
        /// Bytes after `end` that do not form a valid record (a torn or garbage tail).
        var discardedBytes: Int64
        /// Why the first discarded byte was rejected.
        var discardedReason: String?
        /// Set when the discarded bytes are not a torn tail: a valid record follows them.
        var damage: JournalDamage? = nil
    }

    let fileSystem: FileSystem
    let fd: Int32
    private(set) var closed = false
    /// The file's size as this process's last write, cut or reset left it; nil when not known
    /// (``forgetSize()`` when another process's reset is seen). If another process cut the file
    /// without a reset (its failed append), a record written where the file now ends just grows
    /// it, without new free space: correct, and the next reset starts afresh.
    private(set) var knownSize: Int64?

    /// Opens the journal, creating it unless `readOnly`; a read-only journal that does not exist
    /// reads as empty.
    init(fileSystem: FileSystem, readOnly: Bool = false) throws(FolioError) {
        self.fileSystem = fileSystem
        if readOnly {
            let fd = Platform.open(fileSystem.absolute(StoreLayout.journal), flags: Platform.readOnly)
            if fd < 0 && !Platform.isNotFound(Platform.lastError) {
                throw .system("open", path: StoreLayout.journal, errno: Platform.lastError)
            }
            self.fd = fd
        } else {
            self.fd = try fileSystem.openForUpdate(StoreLayout.journal)
        }
    }

    deinit {
        if !closed && fd >= 0 { _ = Platform.close(fd) }
    }

    func close() {
        guard !closed, fd >= 0 else { return }
        closed = true
        _ = Platform.close(fd)
    }

    var size: Int64 {
        get throws(FolioError) {
            guard fd >= 0 else { return 0 }
            let (identity, code) = Platform.identity(ofOpen: fd)
            guard let identity else { throw .system("fstat", path: StoreLayout.journal, errno: code) }
            return identity.size
        }
    }

    /// The header, or nil when the file is shorter than a header or the header fails its checksum
    /// (a journal that was never initialised, or whose reset was cut short: both hold nothing
    /// that is not already in the data files).
    func readHeader() throws(FolioError) -> Header? {
        guard fd >= 0 else { return nil }
        return Self.decodeHeader(try read(at: 0, count: Self.headerSize))
    }

    /// The header at the start of `bytes`, or nil when they are too short or fail the checksum.
    static func decodeHeader(_ bytes: [UInt8]) -> Header? {
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic,
            CRC32C.checksum(Array(bytes[0..<32])) == bytes.loadLittleEndian(UInt32.self, at: 32)
        else { return nil }
        return Header(
            generation: bytes.loadLittleEndian(UInt64.self, at: 8),
            firstTransaction: bytes.loadLittleEndian(UInt64.self, at: 16),
            nextSequence: bytes.loadLittleEndian(UInt64.self, at: 24))
    }

    static func encode(_ header: Header) -> [UInt8] {
        var bytes = magic
        bytes.appendLittleEndian(header.generation)
        bytes.appendLittleEndian(header.firstTransaction)
        bytes.appendLittleEndian(header.nextSequence)
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        bytes.appendLittleEndian(UInt32(0))
        return bytes
    }

    static func seed(_ generation: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: generation ^ (generation >> 32)) ^ 0x464F_4C49
    }

    static func encode(_ record: JournalRecord, generation: UInt64) -> [UInt8] {
        let payload = record.payload()
        var body: [UInt8] = []
        body.reserveCapacity(8 + payload.count)
        body.appendLittleEndian(record.transaction)
        body.append(contentsOf: payload)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + body.count)
        bytes.appendLittleEndian(UInt32(payload.count))
        bytes.appendLittleEndian(CRC32C.checksum(body, seed: seed(generation)))
        bytes.append(contentsOf: body)
        return bytes
    }

    /// Reads the valid records from `offset` on: a few kilobytes first, more while records run
    /// past what was read. When reading stops in free space (zeros to the end of what was read), the
    /// rest of the file is not read: the records end there whatever follows, since zeros before a
    /// valid record are a sector lost by a power cut, not damage (see ``JournalDamage``). Any other
    /// stop reads and classifies the whole tail, as ``parseRecords(_:baseOffset:generation:expectedTransaction:classifyingTail:)``
    /// does; so `discardedBytes` counts only the bytes read.
    ///
    /// It finds the file's end by reading short, not by asking its size: an `fstat` of the journal
    /// makes the next write's timestamps fine-grained (Linux's multigrain timestamps), and the
    /// commit's `fdatasync` then writes the inode too: one more wait for the disk per commit.
    /// - Parameter expectedTransaction: The transaction number the first record must carry.
    func readRecords(from offset: Int64, generation: UInt64, expectedTransaction: UInt64) throws(FolioError) -> ReadResult {
        var records: [JournalRecord] = []
        guard fd >= 0 else { return ReadResult(records: records, end: offset, discardedBytes: 0) }
        var position = offset
        var expected = expectedTransaction
        var window = Int64(Self.firstReadSize)
        var toTheEnd = false
        while true {
            let bytes = try read(at: position, count: Int(window))
            guard !bytes.isEmpty else { return ReadResult(records: records, end: position, discardedBytes: 0) }
            let whole = toTheEnd || bytes.count < Int(window)
            var part = try Self.parseRecords(
                bytes, baseOffset: position, generation: generation, expectedTransaction: expected,
                classifyingTail: whole)
            records += part.records
            expected += UInt64(part.records.count)
            let stop = Int(part.end - position)
            position = part.end
            let left = bytes.count - stop
            let nextLength = left >= Self.recordHeaderSize ? Int64(bytes.loadLittleEndian(UInt32.self, at: stop)) + Int64(Self.recordHeaderSize) : 0
            let runsPast = part.discardedReason == nil || left < Self.recordHeaderSize || nextLength > Int64(left)
            if whole || (!runsPast && part.discardedBytes == 0) {
                part.records = records
                return part
            }
            // The records run to the end of what was read, or one runs past it: read on. Bytes other
            // than zeros after them: read all of the rest (rare: a torn tail), and classify it.
            if runsPast {
                // A record longer than twice the window (rare) is read whole, but never past the
                // file's end: a header of garbage may claim up to 4 GiB.
                window = nextLength > window * 2 ? max(window * 2, min(nextLength, try size - position)) : window * 2
            } else {
                toTheEnd = true
                window = max(1, try size - position)
            }
        }
    }

    /// The bytes at `offset`: `count` of them, fewer where the file ends first.
    func read(at offset: Int64, count: Int) throws(FolioError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { Platform.readAll(fd, into: $0, at: offset) }
        if read < 0 { throw .system("read", path: StoreLayout.journal, errno: Platform.lastError) }
        if read < bytes.count { bytes.removeSubrange(read...) }
        return bytes
    }

    /// The records in `bytes` (the journal from `baseOffset` on), up to the first that is short,
    /// fails its checksum or is out of sequence.
    /// - Parameter classifyingTail: Whether `bytes` run to the end of the file, so that what follows
    ///   the records is told apart: free space (zeros only: `discardedBytes` 0), a torn tail
    ///   (`discardedBytes` up to the last byte that is not zero), or damage.
    static func parseRecords(
        _ bytes: [UInt8], baseOffset: Int64, generation: UInt64, expectedTransaction: UInt64,
        classifyingTail: Bool = true
    ) throws(FolioError) -> ReadResult {
        var records: [JournalRecord] = []
        var position = 0
        var expected = expectedTransaction
        var reason: String?
        let seed = seed(generation)
        while position < bytes.count {
            guard bytes.count - position >= recordHeaderSize else { reason = "incomplete record header"; break }
            let length = Int(bytes.loadLittleEndian(UInt32.self, at: position))
            guard length <= maximumPayload, bytes.count - position - recordHeaderSize >= length else {
                reason = "incomplete record"; break
            }
            guard checksumHolds(bytes, at: position, length: length, seed: seed) else { reason = "checksum mismatch"; break }
            let transaction = bytes.loadLittleEndian(UInt64.self, at: position + 8)
            guard transaction == expected else { reason = "transaction \(transaction) where \(expected) was expected"; break }
            let payload = Array(bytes[(position + recordHeaderSize)..<(position + recordHeaderSize + length)])
            records.append(try JournalRecord.decode(transaction: transaction, payload: payload))
            expected += 1
            position += recordHeaderSize + length
        }
        // Zeros at the end are free space, not a torn tail.
        let discarded =
            reason == nil
            ? 0
            : bytes.withUnsafeBytes { raw in
                Self.lengthWithoutTrailingZeros(UnsafeRawBufferPointer(rebasing: raw[position...]))
            }
        let damage =
            discarded == 0 || !classifyingTail
            ? nil
            : reason.flatMap { reason in
                Self.damage(in: bytes, at: position, baseOffset: baseOffset, generation: generation, expected: expected, reason: reason)
            }
        return ReadResult(
            records: records, end: baseOffset + Int64(position),
            discardedBytes: Int64(discarded), discardedReason: reason, damage: damage)
    }

    /// Whether the checksum of the record at `position` holds under `seed` (its `length` fits in
    /// `bytes`).
    static func checksumHolds(_ bytes: [UInt8], at position: Int, length: Int, seed: UInt32) -> Bool {
        let body = (position + 8)..<(position + recordHeaderSize + length)
        return bytes.withUnsafeBytes { raw in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[body]), seed: seed) == bytes.loadLittleEndian(UInt32.self, at: position + 4)
        }
    }

    /// How many bytes of `bytes` come before its trailing zeros.
    static func lengthWithoutTrailingZeros(_ bytes: UnsafeRawBufferPointer) -> Int {
        var end = bytes.count
        // Eight bytes at a time while they are all zeros, then byte by byte.
        while end >= 8 && bytes.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self) == 0 { end -= 8 }
        while end > 0 && bytes[end - 1] == 0 { end -= 1 }
        return end
    }

    /// Writes encoded records at `offset`, over free space, or past the file's end followed by
    /// ``freeSpace`` zeros in the same write (none for plain appends). Not durable until ``sync()``.
    ///
    /// Where the file ends is what this process last made it (``knownSize``), not asked of the file
    /// system (see ``readRecords(from:generation:expectedTransaction:)`` for why). When it is not
    /// known, the record brings new free space anyway; zeros written over free space or over a
    /// torn tail change nothing committed (the writers' lock is held, and every record before
    /// `offset` was read).
    func append(_ bytes: [UInt8], at offset: Int64) throws(FolioError) {
        let end = offset + Int64(bytes.count)
        if let knownSize, end <= knownSize {
            try fileSystem.write(fd, bytes, at: offset, path: StoreLayout.journal)
            return
        }
        // With no free space (plain appends), the file ends where its last record does.
        let newSize =
            Self.freeSpace == 0
            ? end
            : Self.freeSpace % 4096 == 0 ? (end + Int64(Self.freeSpace) + 4095) / 4096 * 4096 : end + Int64(Self.freeSpace)
        var extended: [UInt8] = []
        extended.reserveCapacity(Int(newSize - offset))
        extended.append(contentsOf: bytes)
        extended.append(contentsOf: repeatElement(0, count: Int(newSize - end)))
        knownSize = nil
        try fileSystem.write(fd, extended, at: offset, path: StoreLayout.journal)
        knownSize = newSize
    }

    /// Forgets where the file ends: another process may have reset or grown it.
    func forgetSize() {
        knownSize = nil
    }

    /// The bytes after `offset` up to the last one that is not zero: a torn tail (or records
    /// not read yet), never free space.
    /// - Throws: A ``FolioError`` if the journal cannot be read, or if a valid record follows bytes
    ///   that are not a torn tail (damage).
    func tail(after offset: Int64, generation: UInt64, expectedTransaction: UInt64) throws(FolioError) -> Int64 {
        let available = try size - offset
        guard available > 0 else { return 0 }
        let result = try Self.parseRecords(
            try read(at: offset, count: Int(available)), baseOffset: offset,
            generation: generation, expectedTransaction: expectedTransaction)
        if let damage = result.damage { throw damage.error() }
        return result.end - offset + result.discardedBytes
    }

    /// Makes everything written so far durable: this is the commit point of the records in it.
    func sync() throws(FolioError) {
        try fileSystem.sync(fd, path: StoreLayout.journal, .data)
    }

    /// A handle that syncs the journal from another task (the group commit's background sync).
    /// The store keeps the journal open until every sync it started has finished.
    struct Syncer: Sendable {
        let fileSystem: FileSystem
        let fd: Int32

        func sync() throws(FolioError) {
            try fileSystem.sync(fd, path: StoreLayout.journal, .data)
        }
    }

    var syncer: Syncer { Syncer(fileSystem: fileSystem, fd: fd) }

    /// Cuts the file back to `length` (dropping a torn tail or a failed append).
    func truncate(to length: Int64) throws(FolioError) {
        knownSize = nil
        try fileSystem.truncate(fd, to: length, path: StoreLayout.journal)
        knownSize = length
    }

    /// Starts a new generation: writes the header, drops every record, and syncs.
    ///
    /// Called only after every record's changes are durable in the data files. A crash during the
    /// reset leaves the old header (its records replay, idempotently), the new header (the old
    /// records no longer validate), or a torn header (read as an empty journal): all three are
    /// correct because the records are already applied.
    func reset(to header: Header) throws(FolioError) {
        try fileSystem.write(fd, Self.encode(header), at: 0, path: StoreLayout.journal)
        try truncate(to: Int64(Self.headerSize))
        try fileSystem.sync(fd, path: StoreLayout.journal)
    }
}

extension Array where Element == UInt8 {
    func loadLittleEndian<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size {
            value |= T(self[offset + index]) << (8 * index)
        }
        return value
    }

    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        for index in 0..<MemoryLayout<T>.size {
            append(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }
}
