/// The write-ahead journal file, `.folio/journal` (FORMAT.md, "Journal", specifies the bytes).
///
/// Layout: a 32-byte header, then records back to back.
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
/// All mutation happens with the writers' flock held (see ``FileLock``); readers in other processes
/// read without it and simply ignore a tail that is still being written.
final class Journal {
    static let headerSize = 40
    static let recordHeaderSize = 16
    static let maximumPayload = 256 << 20
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
        var bytes = [UInt8](repeating: 0, count: Self.headerSize)
        let count = bytes.withUnsafeMutableBytes { Platform.readAll(fd, into: $0, at: 0) }
        if count < 0 { throw .system("read", path: StoreLayout.journal, errno: Platform.lastError) }
        return Self.decodeHeader(Array(bytes[0..<count]))
    }

    /// The header at the start of `bytes`, or nil when they are too short or fail the checksum.
    static func decodeHeader(_ bytes: [UInt8]) -> Header? {
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic,
              CRC32C.checksum(Array(bytes[0..<32])) == bytes.loadLittleEndian(UInt32.self, at: 32)
        else { return nil }
        return Header(generation: bytes.loadLittleEndian(UInt64.self, at: 8),
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

    /// Reads the valid records from `offset` to the end of the file.
    /// - Parameter expectedTransaction: The transaction number the first record must carry.
    func readRecords(from offset: Int64, generation: UInt64, expectedTransaction: UInt64) throws(FolioError) -> ReadResult {
        let fileSize = try size
        guard fileSize > offset else { return ReadResult(records: [], end: offset, discardedBytes: 0) }
        var bytes = [UInt8](repeating: 0, count: Int(fileSize - offset))
        let count = bytes.withUnsafeMutableBytes { Platform.readAll(fd, into: $0, at: offset) }
        if count < 0 { throw .system("read", path: StoreLayout.journal, errno: Platform.lastError) }
        if count < bytes.count { bytes.removeSubrange(count...) }
        return try Self.parseRecords(bytes, baseOffset: offset, generation: generation, expectedTransaction: expectedTransaction)
    }

    static func parseRecords(_ bytes: [UInt8], baseOffset: Int64, generation: UInt64, expectedTransaction: UInt64) throws(FolioError) -> ReadResult {
        var records: [JournalRecord] = []
        var position = 0
        var expected = expectedTransaction
        var reason: String?
        let seed = seed(generation)
        while position < bytes.count {
            guard bytes.count - position >= recordHeaderSize else { reason = "incomplete record header"; break }
            let length = Int(bytes.loadLittleEndian(UInt32.self, at: position))
            let checksum = bytes.loadLittleEndian(UInt32.self, at: position + 4)
            guard length <= maximumPayload, bytes.count - position - recordHeaderSize >= length else {
                reason = "incomplete record"; break
            }
            let bodyRange = (position + 8)..<(position + recordHeaderSize + length)
            let valid = bytes.withUnsafeBytes { raw in
                CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[bodyRange]), seed: seed) == checksum
            }
            guard valid else { reason = "checksum mismatch"; break }
            let transaction = bytes.loadLittleEndian(UInt64.self, at: position + 8)
            guard transaction == expected else { reason = "transaction \(transaction) where \(expected) was expected"; break }
            let payload = Array(bytes[(position + recordHeaderSize)..<(position + recordHeaderSize + length)])
            records.append(try JournalRecord.decode(transaction: transaction, payload: payload))
            expected += 1
            position += recordHeaderSize + length
        }
        let damage = reason.flatMap { reason in
            Self.damage(in: bytes, at: position, baseOffset: baseOffset, generation: generation, expected: expected, reason: reason)
        }
        return ReadResult(records: records, end: baseOffset + Int64(position),
                          discardedBytes: Int64(bytes.count - position), discardedReason: reason, damage: damage)
    }

    /// Appends encoded records at `offset`. Not durable until ``sync()``.
    func append(_ bytes: [UInt8], at offset: Int64) throws(FolioError) {
        try fileSystem.write(fd, bytes, at: offset, path: StoreLayout.journal)
    }

    /// Makes everything written so far durable: this is the commit point of the records in it.
    func sync() throws(FolioError) {
        try fileSystem.sync(fd, path: StoreLayout.journal, dataOnly: true)
    }

    /// A handle that syncs the journal from another task (the group commit's background sync).
    /// The store keeps the journal open until every sync it started has finished.
    struct Syncer: Sendable {
        let fileSystem: FileSystem
        let fd: Int32

        func sync() throws(FolioError) {
            try fileSystem.sync(fd, path: StoreLayout.journal, dataOnly: true)
        }
    }

    var syncer: Syncer { Syncer(fileSystem: fileSystem, fd: fd) }

    /// Cuts the file back to `length` (dropping a torn tail or a failed append).
    func truncate(to length: Int64) throws(FolioError) {
        try fileSystem.truncate(fd, to: length, path: StoreLayout.journal)
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
