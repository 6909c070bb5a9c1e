@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The journal cursor alone (Journal/JournalCursor.swift), against a real journal file in a temp
/// folder, without a store: a writer cursor and a reader cursor on two open journals, as two
/// processes have. The expectations come from a model of FORMAT.md's journal (records numbered
/// consecutively within a generation, a reset starts a generation at the next transaction, a
/// record cut short is not committed), not from the cursor.
@Suite struct JournalCursorTests {
    /// Two cursors on one journal file, each with its own file descriptor.
    private struct Pair {
        let folder = TemporaryFolder()
        let writer: JournalCursor
        let reader: JournalCursor

        init() throws {
            try FileManager.default.createDirectory(
                at: folder.url.appendingPathComponent(StoreLayout.machinery),
                withIntermediateDirectories: true)
            let fileSystem = FileSystem(root: folder.url.path)
            writer = JournalCursor(journal: try Journal(fileSystem: fileSystem))
            reader = JournalCursor(journal: try Journal(fileSystem: fileSystem))
        }
    }

    /// What a catch-up saw: whether the generation changed, and if so whether no record was
    /// skipped, and the records taken in.
    private struct Look { var newGeneration: Bool; var sawEverything: Bool; var records: [JournalRecord] }

    /// A store's catch-up, one step at a time (StoreEngine.refreshJournal does the same and
    /// applies each record where this takes it in).
    private static func catchUp(_ cursor: JournalCursor) throws -> Look {
        var look = Look(newGeneration: false, sawEverything: true, records: [])
        let current = try cursor.currentHeader()
        if current != cursor.header {
            look.newGeneration = true
            look.sawEverything = cursor.seesEverything(movingTo: current)
            cursor.start(current)
        }
        let (records, end) = try cursor.recordsPastCursor()
        for record in records { cursor.take(record) }
        cursor.advance(to: end)
        look.records = records
        return look
    }

    private static func record(_ transaction: UInt64, command sequence: UInt64) -> JournalRecord {
        JournalRecord(
            transaction: transaction, changes: [],
            outbox: [
                .enqueue(sequence: sequence, command: .object(["sequence": .number(String(sequence)), "note": .string("t\(transaction)")]))
            ])
    }

    /// A checkpoint's reset: a new generation from the next transaction.
    private static func reset(_ cursor: JournalCursor, nextSequence: UInt64) throws {
        let generation = (cursor.header?.generation ?? UInt64.random(in: 1...UInt64(UInt32.max))) &+ 1
        let fresh = cursor.nextGeneration(generation, nextSequence: nextSequence)
        try cursor.journal.reset(to: fresh)
        cursor.start(fresh)
    }

    /// Random appends, torn tails, resets and reader catch-ups, 400 steps from a seed: the reader
    /// takes in every record of a generation once, in order; a reset is seen, and said to skip
    /// records exactly when the reader had not read them all; a torn tail is never taken in and
    /// is what lies past the cursor; the next transaction number never goes back.
    @Test func aReaderSeesAppendsOnceResetsAndNeverATornTail() throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_CURSOR_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let pair = try Pair()
        let writer = pair.writer, reader = pair.reader
        try Self.reset(writer, nextSequence: 1)

        // The model: the current generation's committed transactions, how many the reader has
        // taken in, whether a reset happened since its last look, and a torn tail's length.
        var generation: [UInt64] = []
        var nextTransaction: UInt64 = 1
        var readerTook = 0
        var resetSinceLook = true
        var readerMissed = false
        var tornBytes = 0
        var counts = (appends: 0, torn: 0, resets: 0, looks: 0, missed: 0)
        let started = ContinuousClock.now
        var failed = false
        /// Records a failure; the run stops after the step, so one failure is not reported 400 times.
        func check(_ holds: Bool, _ message: String) {
            if !holds { Issue.record(Comment(rawValue: message)); failed = true }
        }
        for step in 0..<400 where !failed {
            check(ContinuousClock.now - started < .seconds(60), "seed \(seed): out of time at step \(step)")
            let context = "seed \(seed), step \(step)"
            switch random.next() % 8 {
            case 0, 1, 2:
                let record = Self.record(nextTransaction, command: nextTransaction)
                let end = try writer.append(record)
                writer.take(record)
                writer.advance(to: end)
                generation.append(nextTransaction)
                nextTransaction += 1
                tornBytes = 0
                counts.appends += 1
                check(try writer.bytesPastCursor() == 0, "\(context): the append ends the file")
            case 3:
                // A record cut short by a crash: some of its bytes, never all.
                let bytes = Journal.encode(Self.record(nextTransaction, command: nextTransaction), generation: writer.header!.generation)
                let length = 1 + Int(random.next() % UInt64(bytes.count - 1))
                try writer.journal.append(Array(bytes.prefix(length)), at: writer.readOffset)
                // A shorter one over an earlier one leaves the earlier one's end in the file. Zeros
                // at its end are free space (FORMAT.md), not a torn tail.
                let nonZero = (bytes.prefix(length).lastIndex { $0 != 0 }).map { $0 + 1 } ?? 0
                tornBytes = max(tornBytes, nonZero)
                counts.torn += 1
            case 4:
                try Self.reset(writer, nextSequence: nextTransaction)
                if readerTook < generation.count { readerMissed = true }
                generation = []
                readerTook = 0
                resetSinceLook = true
                tornBytes = 0
                counts.resets += 1
            default:
                let look = try Self.catchUp(reader)
                counts.looks += 1
                check(look.newGeneration == resetSinceLook, "\(context): a reset is seen exactly when one happened")
                if resetSinceLook {
                    check(look.sawEverything == !readerMissed, "\(context): skipped records are reported exactly when some were")
                    if readerMissed { counts.missed += 1 }
                }
                let expected = Array(generation[readerTook...])
                check(
                    look.records.map(\.transaction) == expected,
                    "\(context): the records appended since the last look, once, in order: \(look.records.map(\.transaction)), expected \(expected)")
                check(reader.records.map(\.transaction) == generation, "\(context): the reader holds the generation's records")
                check(reader.nextTransaction == nextTransaction, "\(context): the next transaction is \(reader.nextTransaction), expected \(nextTransaction)")
                check(try reader.bytesPastCursor() == Int64(tornBytes), "\(context): only the torn tail lies past the cursor")
                readerTook = generation.count
                resetSinceLook = false
                readerMissed = false
            }
        }
        print(
            "JournalCursorTests seed \(seed): \(counts.appends) appends, \(counts.torn) torn tails, \(counts.resets) resets "
                + "(\(counts.missed) with records the reader never read), \(counts.looks) looks, all as the model says")
    }

    /// A command is held by the journal if a record the cursor took in, or one appended since,
    /// changes it; a reset since the cursor's look counts as holding it.
    @Test func mayHoldACommandTakenInAppendedSinceOrAfterAReset() throws {
        let pair = try Pair()
        try Self.reset(pair.writer, nextSequence: 1)
        for transaction in UInt64(1)...2 {
            let record = Self.record(transaction, command: transaction * 10)
            pair.writer.advance(to: try pair.writer.append(record))
            pair.writer.take(record)
        }
        _ = try Self.catchUp(pair.reader)
        let later = Self.record(3, command: 30)
        pair.writer.advance(to: try pair.writer.append(later))
        pair.writer.take(later)
        #expect(try pair.reader.mayHold(command: 10), "taken in")
        #expect(try pair.reader.mayHold(command: 30), "appended since the reader's look")
        #expect(try !pair.reader.mayHold(command: 40))
        try Self.reset(pair.writer, nextSequence: 31)
        #expect(try pair.reader.mayHold(command: 40), "the journal was reset since the reader's look")
    }

    /// Valid records after damaged bytes are damage, not a torn tail: reading refuses, and the
    /// cursor does not move.
    @Test func damageBeforeValidRecordsIsAnErrorNotATail() throws {
        let pair = try Pair()
        try Self.reset(pair.writer, nextSequence: 1)
        var offsets: [Int64] = []
        for transaction in UInt64(1)...3 {
            let record = Self.record(transaction, command: transaction)
            offsets.append(pair.writer.readOffset)
            pair.writer.advance(to: try pair.writer.append(record))
            pair.writer.take(record)
        }
        // One byte of the second record's payload.
        try pair.writer.journal.append([0x7A], at: offsets[1] + Int64(Journal.recordHeaderSize) + 2)
        #expect(throws: FolioError.self) { _ = try Self.catchUp(pair.reader) }
        #expect(pair.reader.records.isEmpty && pair.reader.readOffset == Int64(Journal.headerSize))
    }
}

extension JournalCursorTests {
    /// The partitions the records taken in change are the cursor's (what a load applies records
    /// to, what the next checkpoint writes), in both processes, and a new generation has none.
    @Test func thePartitionsTheRecordsChangeUntilTheNextGeneration() throws {
        let pair = try Pair()
        try Self.reset(pair.writer, nextSequence: 1)
        let day = try PartitionAddress(collection: "todos", granularity: .day, partitionText: "2026-11-22")
        let month = try PartitionAddress(collection: "stats", granularity: .month, partitionText: "2026-11")
        let change = { (address: PartitionAddress, id: String) in JournalRecord.Change(address: address, id: id, entity: .object([:])) }
        let first = JournalRecord(transaction: pair.writer.nextTransaction, changes: [change(day, "a"), change(day, "b"), change(month, "m")], outbox: [])
        pair.writer.take(first)
        pair.writer.advance(to: try pair.writer.append(first))
        #expect(pair.writer.touched == [day, month])
        _ = try Self.catchUp(pair.reader)
        #expect(pair.reader.touched == [day, month])
        try Self.reset(pair.writer, nextSequence: 1)
        #expect(pair.writer.touched.isEmpty)
        let look = try Self.catchUp(pair.reader)
        #expect(look.newGeneration && look.sawEverything && pair.reader.touched.isEmpty)
    }
}
