/// This process's place in the journal: the header it last read, the records of that generation
/// it has taken in, the partitions they change, where they end, and the number the next
/// transaction gets.
///
/// The committed state is the files with the current generation's records applied in order; the
/// cursor says which records those are. The store asks it what other processes appended (or
/// whether one of them reset the journal) at the start of every read and write, applies each
/// record, and tells the cursor it did (``take(_:)``, ``advance(to:)``), one record at a time:
/// applying a record may load a file, and the file must then see exactly the records before it.
final class JournalCursor {
    let journal: Journal
    /// The header last read, or nil if the journal holds none yet.
    private(set) var header: Journal.Header?
    /// Offset just past the last record taken in.
    private(set) var readOffset = Int64(Journal.headerSize)
    /// The records of the current generation taken in, in order.
    private(set) var records: [JournalRecord] = []
    /// The transaction number after the last one seen (survives generation changes).
    private(set) var nextTransaction: UInt64 = 1
    /// The partitions the records taken in change: the files hold less than the committed state
    /// there (a load applies the records on top), and the next checkpoint writes them.
    private(set) var touched: Set<PartitionAddress> = []
    /// How many records were taken in when the cursor moved to each offset of this generation
    /// (``recordCount(through:)``).
    private var countAt: [Int64: Int] = [:]

    init(journal: Journal) {
        self.journal = journal
    }

    /// Reads the journal's header as it is now (nil if it has none; throws if its bytes are
    /// there and damaged).
    func currentHeader() throws(FolioError) -> Journal.Header? {
        let current = try journal.readHeader()
        if current == nil { try journal.checkHeader() }
        return current
    }

    /// Whether moving to `newHeader` skips no record: it starts at the transaction after the last
    /// one taken in (or there was neither header nor record before). When false, another process
    /// checkpointed records this one never read, and the files now hold them.
    func seesEverything(movingTo newHeader: Journal.Header?) -> Bool {
        newHeader.map { $0.firstTransaction == nextTransaction } ?? records.isEmpty
    }

    /// Moves to a new generation (another process reset the journal, this one did, or this is
    /// the first look): its records are read from just after the header.
    func start(_ newHeader: Journal.Header?) {
        // Another process's reset cut the file: where it ends is not known any more.
        if newHeader != header { journal.forgetSize() }
        records = []
        touched = []
        countAt = [:]
        header = newHeader
        readOffset = Int64(Journal.headerSize)
        if let newHeader { nextTransaction = max(nextTransaction, newHeader.firstTransaction) }
    }

    /// The records appended past the cursor (by other processes, or before this one opened), and
    /// where the last whole one ends; a torn tail is left out. Moves nothing: take each in, then
    /// ``advance(to:)``.
    /// - Throws: A ``FolioError`` if the journal cannot be read, or if valid records follow
    ///   damaged bytes (damage, not a torn tail).
    func recordsPastCursor() throws(FolioError) -> (records: [JournalRecord], end: Int64) {
        guard let header else { return ([], readOffset) }
        let result = try journal.readRecords(from: readOffset, generation: header.generation, expectedTransaction: nextTransaction)
        if let damage = result.damage { throw damage.error() }
        return (result.records, result.end)
    }

    /// Notes that a record was applied: it belongs to the current generation's state.
    func take(_ record: JournalRecord) {
        records.append(record)
        // A record's changes come grouped by partition: one insert per run.
        var last: PartitionAddress?
        for change in record.changes where change.address != last {
            touched.insert(change.address)
            last = change.address
        }
        nextTransaction = record.transaction + 1
    }

    /// Moves the read position past the records taken in.
    func advance(to end: Int64) {
        readOffset = end
        countAt[end] = records.count
    }

    /// How many of the records taken in end at or before `offset` of this generation: those a
    /// sync through `offset` made durable. Nil when the cursor never stood there.
    func recordCount(through offset: Int64) -> Int? {
        offset <= Int64(Journal.headerSize) ? 0 : offset >= readOffset ? records.count : countAt[offset]
    }

    /// Appends a record at the cursor with one write, or, if that fails, cuts the journal back
    /// to where it was, so the transaction certainly did not happen. Moves nothing: take the
    /// record in, then ``advance(to:)`` the returned end. Needs a header and the writers' lock.
    /// - Returns: The offset just past the record.
    /// - Throws: A ``FolioError`` if the record is too large or the write fails.
    func append(_ record: JournalRecord) throws(FolioError) -> Int64 {
        guard let header else { throw FolioError(.io, "the journal has no header to append to", path: StoreLayout.journal) }
        let bytes = Journal.encode(record, generation: header.generation)
        try Limits.checkTransaction(payloadBytes: bytes.count - Journal.recordHeaderSize)
        let start = readOffset
        do {
            try journal.append(bytes, at: start)
        } catch {
            // The record may be partly (or, despite the error, wholly) written: cut it off.
            try journal.truncate(to: start)
            throw error
        }
        return start + Int64(bytes.count)
    }

    /// A header for a new generation that starts at the next transaction.
    func nextGeneration(_ generation: UInt64, nextSequence: UInt64) -> Journal.Header {
        Journal.Header(generation: generation, firstTransaction: nextTransaction, nextSequence: nextSequence)
    }

    /// Whether the journal's current generation has a record that changes this command: the ones
    /// taken in, or ones appended since (by another process, perhaps checkpointing them now). A
    /// journal reset meanwhile counts as holding it (the next read starts from that generation).
    func mayHold(command sequence: UInt64) throws(FolioError) -> Bool {
        if records.contains(where: { $0.outbox.contains { $0.sequence == sequence } }) { return true }
        guard let header else { return false }
        guard try journal.readHeader() == header else { return true }
        let newer = try journal.readRecords(from: readOffset, generation: header.generation, expectedTransaction: nextTransaction)
        return newer.records.contains { $0.outbox.contains { $0.sequence == sequence } }
    }

    /// The bytes past the last record taken in, free space (zeros) left out: a torn tail, or
    /// records not read yet. Reads the whole tail.
    /// - Throws: A ``FolioError`` if the journal cannot be read, or if valid records follow
    ///   damaged bytes (damage, not a torn tail).
    func bytesPastCursor() throws(FolioError) -> Int64 {
        guard let header else { return max(0, try journal.size - readOffset) }
        return try journal.tail(after: readOffset, generation: header.generation, expectedTransaction: nextTransaction)
    }
}
