@testable import Folio
import FolioCrashSupport
import Foundation
import Testing

/// The journal's free space (FORMAT.md, "The journal": zeros after the last record), against real
/// journal files. The expectations come from FORMAT.md's reading rules, written out below as a
/// small model, not from Folio's reader.
@Suite struct JournalFreeSpaceTests {
    /// A store's journal grows by whole chunks of zeros: after the first commit of a generation,
    /// the next ones overwrite free space and leave the file's size alone (so their `fdatasync`
    /// writes no size). Before free space, each commit grew the file by its record.
    @Test func commitsOverwriteFreeSpaceInsteadOfGrowingTheFile() async throws {
        let folder = TemporaryFolder("free")
        var configuration = Store.Configuration.testing()
        configuration.checkpointDelay = .seconds(3600)
        let store = try await Store.open(at: folder.url, configuration: configuration)
        try await store.write { tx in try tx.upsert(Tag(id: "t-0", name: "First", color: "red")) }
        let size = try folder.bytes(".folio/journal").count
        #expect(size >= Journal.freeSpace && size % 4096 == 0, "the first record brings 64 KiB of zeros: \(size) bytes")
        for n in 1...50 {
            try await store.write { tx in try tx.upsert(Tag(id: "t-\(n)", name: "Tag \(n)", color: "blue")) }
            #expect(try folder.bytes(".folio/journal").count == size, "commit \(n) changed the journal's size")
        }
        let journal = try folder.bytes(".folio/journal")
        let used = (journal.lastIndex { $0 != 0 } ?? 0) + 1
        #expect(used > 50 * 40 && used < size, "51 records, then zeros: \(used) of \(size) bytes used")
        // Another process reads all 51, and the status sees no torn tail in the zeros.
        let status = try await Store.status(at: folder.url)
        #expect(status.journal.pendingTransactions == 51 && status.journal.tornBytes == 0, "\(status.journal)")
        #expect(try await Store.verify(at: folder.url).isHealthy)
        try await store.close()
        #expect(try folder.bytes(".folio/journal").count == Journal.headerSize, "a checkpoint cuts the free space off")
        let reopened = try await Store.open(at: folder.url)
        #expect(try await reopened.fetch(Query<Tag>()).count == 51)
        try await reopened.close()
    }

    /// Another process's reset cuts the file back to its header: a writer that saw the reset writes
    /// its next record with new free space (it does not ask the file's size, which would cost its
    /// commit a sync of the inode), and the records after it overwrite that free space again.
    @Test func afterAnotherProcesssResetCommitsGetFreeSpaceAgain() throws {
        let folder = TemporaryFolder("free-reset")
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent(StoreLayout.machinery), withIntermediateDirectories: true)
        let fileSystem = FileSystem(root: folder.url.path)
        let first = JournalCursor(journal: try Journal(fileSystem: fileSystem))
        let second = JournalCursor(journal: try Journal(fileSystem: fileSystem))
        func size() throws -> Int { try folder.bytes(".folio/journal").count }
        func reset(_ cursor: JournalCursor, generation: UInt64) throws {
            let fresh = cursor.nextGeneration(generation, nextSequence: 1)
            try cursor.journal.reset(to: fresh)
            cursor.start(fresh)
        }
        func catchUp(_ cursor: JournalCursor) throws {
            let current = try cursor.currentHeader()
            if current != cursor.header { cursor.start(current) }
            let (records, end) = try cursor.recordsPastCursor()
            for record in records { cursor.take(record) }
            cursor.advance(to: end)
        }
        func commit(_ cursor: JournalCursor) throws {
            try catchUp(cursor)
            let record = JournalRecord(
                transaction: cursor.nextTransaction, changes: [],
                outbox: [
                    .enqueue(sequence: cursor.nextTransaction, command: .object(["note": .string("a command")]))
                ])
            let end = try cursor.append(record)
            cursor.take(record)
            cursor.advance(to: end)
        }
        try reset(first, generation: 7)
        for _ in 0..<3 { try commit(first) }
        let grown = try size()
        #expect(grown >= Journal.headerSize + Journal.freeSpace, "the first commit brings free space: \(grown)")
        // The other process takes the journal over and empties it.
        try catchUp(second)
        try reset(second, generation: 8)
        #expect(try size() == Journal.headerSize)
        for round in 0..<3 {
            try commit(first)
            let now = try size()
            #expect(now >= Journal.headerSize + Journal.freeSpace, "round \(round): the commit after the reset brings free space: \(now) bytes")
        }
        let after = try size()
        try commit(first)
        #expect(try size() == after, "the next commit overwrites")
        try catchUp(second)
        #expect(second.records.count == 4, "the other process reads the four records of the new generation")
    }

    /// `FOLIO_JOURNAL_FREE_SPACE` sets how a writer process grows the journal (``Journal/freeSpace``):
    /// after a fresh store's first commit, the file holds its header, the record, then the zeros
    /// the strategy says: none with 0 (plain appends), exactly 100 with 100, and 64 KiB rounded up
    /// to a whole 4 KiB page by default (unset, or anything that is not a size).
    @Test(arguments: [(nil, "default"), ("65536", "default"), ("0", "0"), ("100", "100"), ("8192", "8192"), ("-1", "default"), ("lots", "default")])
    func theGrowthStrategyFollowsTheEnvironment(value: String?, expected: String) async throws {
        let folder = TemporaryFolder("growth-env")
        let logs = folder.url.deletingLastPathComponent()
        // One commit, then a pause of five minutes (no checkpoint: the delay is an hour; the
        // store's close after the pause checkpoints), while the journal is read here. A minute
        // was not enough in a full run on a loaded machine: the child closed first.
        let writer = try CrashChild(
            ["write", folder.url.path, "1", "1", "full", "w", "--delay-ms", "3600000", "--idle-ms", "300000", "--idle-every", "1", "--max-seconds", "400"],
            logs: logs, name: "growth-env", environment: value.map { ["FOLIO_JOURNAL_FREE_SPACE": $0] } ?? [:])
        defer { writer.kill() }
        try await writer.waitForFirstAck()
        let bytes = Array(try folder.bytes(StoreLayout.journal))
        let header = try #require(Journal.decodeHeader(bytes), "\(bytes.count) bytes")
        let read = try Journal.parseRecords(
            Array(bytes[Journal.headerSize...]), baseOffset: Int64(Journal.headerSize), generation: header.generation,
            expectedTransaction: header.firstTransaction)
        #expect(read.records.count == 1 && read.discardedBytes == 0, "\(read.records.count) records, \(read.discardedBytes) torn bytes")
        let end = Int(read.end)
        let zeros = bytes.count - end
        #expect(bytes[end...].allSatisfy { $0 == 0 })
        switch expected {
        case "0": #expect(zeros == 0, "plain appends: \(zeros) bytes after the record")
        case "100": #expect(zeros == 100, "\(zeros) bytes after the record")
        case "8192": #expect(bytes.count == (end + 8192 + 4095) / 4096 * 4096, "\(bytes.count) bytes, the record ends at \(end)")
        default: #expect(bytes.count == (end + (64 << 10) + 4095) / 4096 * 4096, "\(bytes.count) bytes, the record ends at \(end)")
        }
    }

    /// A torn tail whose first bytes claim a record of almost 4 GiB: the reader reads on past its
    /// window for a long record, but never past the file's end, so it does not allocate what the
    /// garbage claims (with the window grown to the claimed length, it took 4 GiB of memory).
    @Test func aLengthClaimedByGarbageIsNotAllocated() throws {
        let folder = TemporaryFolder("free-claim")
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent(StoreLayout.machinery), withIntermediateDirectories: true)
        let generation: UInt64 = 42
        var bytes = Journal.encode(Journal.Header(generation: generation, firstTransaction: 1, nextSequence: 1))
        bytes += Journal.encode(
            JournalRecord(
                transaction: 1, changes: [],
                outbox: [
                    .enqueue(sequence: 1, command: .object(["note": .string("a command")]))
                ]), generation: generation)
        // The claim starts within the reader's first window, and the garbage runs past it.
        let claim: UInt32 = 0xFFFF_FF00
        let garbage = withUnsafeBytes(of: claim.littleEndian, Array.init) + (0..<20_000).map { UInt8(1 + $0 % 250) }
        bytes += garbage
        try Data(bytes).write(to: folder.url.appendingPathComponent(StoreLayout.journal))
        let journal = try Journal(fileSystem: FileSystem(root: folder.url.path), readOnly: true)
        defer { journal.close() }
        let before = ResourceUsage.now().peakResidentBytes
        let read = try journal.readRecords(from: Int64(Journal.headerSize), generation: generation, expectedTransaction: 1)
        let grown = ResourceUsage.now().peakResidentBytes - before
        #expect(
            read.records.map(\.transaction) == [1] && read.discardedBytes == Int64(garbage.count),
            "\(read.records.count) records, \(read.discardedBytes) bytes of torn tail")
        #expect(grown < 256 << 20, "reading a 20 KiB journal raised the peak memory by \(grown >> 20) MiB")
    }

    /// Random journals, each a run of records of random sizes (some far larger than the reader's
    /// first read) followed by one ending: nothing, free space, a record cut short then zeros, a
    /// lost sector with valid records after it, garbage, or garbage then a valid record (damage),
    /// and sometimes stray garbage far into the free space. The reader of a process (reading past
    /// its cursor a window at a time) and the checkpoint's look at the tail must say what the
    /// model of FORMAT.md says: which records committed, where they end, how many bytes of torn
    /// tail follow (free space left out), and whether it is damage.
    @Test func readingAgreesWithTheFormatsRules() throws {
        let seed = ProcessInfo.processInfo.environment["FOLIO_FREE_SPACE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix64(seed: seed)
        let folder = TemporaryFolder("free-model")
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent(StoreLayout.machinery), withIntermediateDirectories: true)
        let fileSystem = FileSystem(root: folder.url.path)
        var counts: [String: Int] = [:]
        var failures: [String] = []
        for round in 0..<300 where failures.count < 5 {
            let generation = 1 + random.next() % 1_000_000
            let first: UInt64 = 1 + random.next() % 1000
            var bytes = Journal.encode(Journal.Header(generation: generation, firstTransaction: first, nextSequence: 1))
            var transaction = first
            func record(size: Int) -> [UInt8] {
                defer { transaction += 1 }
                let note = String(repeating: "x", count: size)
                return Journal.encode(
                    JournalRecord(
                        transaction: transaction, changes: [],
                        outbox: [
                            .enqueue(sequence: transaction, command: .object(["note": .string(note)]))
                        ]), generation: generation)
            }
            func size() -> Int { random.next() % 6 == 0 ? 3000 + Int(random.next() % 20_000) : Int(random.next() % 400) }
            for _ in 0..<Int(random.next() % 12) { bytes += record(size: size()) }
            /// Bytes that are not a record: random ones, or a record with one byte of its payload
            /// changed (its length still right, its checksum wrong).
            func garbage() -> [UInt8] {
                if random.next() % 2 == 0 { return (0..<(1 + Int(random.next() % 600))).map { _ in UInt8(1 + random.next() % 255) } }
                var damaged = record(size: size())
                transaction -= 1
                damaged[Journal.recordHeaderSize + Int(random.next() % UInt64(damaged.count - Journal.recordHeaderSize))] ^= 0x20
                return damaged
            }
            let ending = ["none", "free", "cut", "lost sector", "garbage", "damage"][Int(random.next() % 6)]
            counts[ending, default: 0] += 1
            switch ending {
            case "free":
                bytes += [UInt8](repeating: 0, count: Int(random.next() % 100_000))
            case "cut":
                let next = record(size: size())
                bytes += Array(next.prefix(1 + Int(random.next() % UInt64(next.count - 1))))
                bytes += [UInt8](repeating: 0, count: Int(random.next() % 70_000))
            case "lost sector":
                // A power cut lost the start of a record: zeros to the end of its sector.
                let start = bytes.count
                for _ in 0..<(1 + Int(random.next() % 3)) { bytes += record(size: size()) }
                for index in start..<min(bytes.count, (start / 512 + 1) * 512) { bytes[index] = 0 }
                bytes += [UInt8](repeating: 0, count: Int(random.next() % 70_000))
            case "garbage":
                bytes += garbage()
                bytes += [UInt8](repeating: 0, count: Int(random.next() % 70_000))
            case "damage":
                bytes += garbage()
                bytes += record(size: size())
            default:
                break
            }
            if random.next() % 5 == 0 && ending != "damage" {
                // A stray byte far into the free space (a bit flip there): a torn tail, never a record.
                bytes += [UInt8](repeating: 0, count: Int(random.next() % 10_000)) + [0x5A]
            }
            let model = FormatModel(bytes: bytes, generation: generation, first: first)
            try Data(bytes).write(to: folder.url.appendingPathComponent(StoreLayout.journal))
            let journal = try Journal(fileSystem: fileSystem, readOnly: true)
            defer { journal.close() }
            let context = "seed \(seed), round \(round) (\(ending), \(bytes.count) bytes)"
            let read = try journal.readRecords(from: Int64(Journal.headerSize), generation: generation, expectedTransaction: first)
            if read.records.map(\.transaction) != model.transactions || read.end != Int64(model.end) {
                failures.append("\(context): read \(read.records.count) records to \(read.end); the model: \(model.transactions.count) to \(model.end)")
            }
            if (read.damage != nil) != model.damaged {
                failures.append("\(context): the reader says damage \(read.damage != nil), the model \(model.damaged)")
            }
            do {
                let tail = try journal.tail(after: read.end, generation: generation, expectedTransaction: first + UInt64(read.records.count))
                if model.damaged { failures.append("\(context): the tail is damage, but it was measured as \(tail) bytes") }
                if tail != Int64(model.tornBytes) { failures.append("\(context): tail \(tail) bytes, the model \(model.tornBytes)") }
            } catch {
                if !model.damaged { failures.append("\(context): the tail threw \(error.message) though it is no damage") }
            }
        }
        print(
            "journal free space: 300 journals (\(counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))), \(failures.count) disagreements with the model (seed \(seed))"
        )
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}

/// FORMAT.md's reading rules, written out plainly: records from byte 40, each with its length,
/// its checksum (CRC-32C under the generation's seed) over the transaction and payload, and the
/// next transaction number; the first that fails ends them. Zeros only after it: free space.
/// Otherwise a torn tail, up to its last byte that is not zero, unless a later record validates
/// (at least the expected transaction) with no all-zero 512-byte sector part before it: damage.
private struct FormatModel {
    var transactions: [UInt64] = []
    var end = 40
    var tornBytes = 0
    var damaged = false

    init(bytes: [UInt8], generation: UInt64, first: UInt64) {
        let seed = UInt32(truncatingIfNeeded: generation ^ (generation >> 32)) ^ 0x464F_4C49
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }
        func validRecord(at position: Int, minimum: UInt64) -> Bool {
            guard position + 16 <= bytes.count, u64(position + 8) >= minimum else { return false }
            let length = Int(u32(position))
            guard length <= 256 << 20, position + 16 + length <= bytes.count else { return false }
            return CRC32C.checksum(Array(bytes[(position + 8)..<(position + 16 + length)]), seed: seed) == u32(position + 4)
        }
        var expected = first
        while validRecord(at: end, minimum: expected) && u64(end + 8) == expected {
            transactions.append(expected)
            expected += 1
            end += 16 + Int(u32(end))
        }
        let lastNonZero = bytes.lastIndex { $0 != 0 } ?? -1
        tornBytes = max(0, lastNonZero + 1 - end)
        guard tornBytes > 0 else { return }
        guard let next = (end..<bytes.count).first(where: { validRecord(at: $0, minimum: expected) }) else { return }
        // Damage, unless a sector's part between the end and that record is all zeros.
        var sectorStart = end
        while sectorStart < next {
            let sectorEnd = min(next, (sectorStart / 512 + 1) * 512)
            if bytes[sectorStart..<sectorEnd].allSatisfy({ $0 == 0 }) { return }
            sectorStart = sectorEnd
        }
        damaged = true
    }
}
