internal import Foundation

/// `.folio/index/<collection>.fields`: the field index, each partition file of a collection taken
/// apart by field (``FieldColumns``), with the file's identity.
///
/// It lets a query with a predicate over years of files (StoreEngine+Scan.swift) read a few
/// columns of one file instead of thousands of files: a partition whose file still has the
/// recorded identity is filtered on the columns the predicate reads, and only the entities that
/// match are read from the file (by their recorded byte range) and decoded, or, for a file whose
/// columns hold its entities whole (`<whole>` 1: every entity has every field of the file as a
/// string, number or boolean), built from the columns without opening the file. Like the id index it
/// is derived data, never authoritative: an entry whose file changed is ignored (the file is read,
/// and the entry made again), and a missing or damaged index is rebuilt by the next such query.
///
/// ```
/// folio-fields 3
/// ids unique                          or "ids repeated": whether an id is in two of these files
/// P 2026-11-22 <device> <inode> <size> <modified ns> <changed ns> <count> <whole>
/// …                                   one line per partition file
/// S <bytes> <crc> ids
/// S <bytes> <crc> ranges
/// S <bytes> <crc> field "title"      one per field name (a JSON string)
/// . <crc>                             the end of the header, with the CRC-32C of the lines above
/// ["<id>",…]                          the ids section: one line per partition, in the P lines' order
/// 17-254 260-498 …                    the ranges section: where each entity's object lies in the file
/// ["Milk",…]                          each field's section: its value in each entity (null: none)
/// ```
///
/// A query reads the header and the sections it needs, not the whole file, and checks each part it
/// reads against its CRC-32C (hex): an index cut short, damaged or edited by hand is rebuilt, never
/// trusted. `ids unique` spares it
/// comparing the ids of the files it reads from the index with each other (IdLocator+Duplicates.swift).
///
/// An entry is made only from a file that holds exactly Folio's newest version of it (so it has
/// the format's shape and is no person's save), and only when the file last changed at least
/// ``settleTime`` before it was read: an edit in place within the file system's timestamp
/// granularity keeps size and times, so a file read right after a change could change again
/// without a new identity (git's "racily clean" entries). A later change then always gives the
/// file another change time, which no one can set by hand.
enum FieldIndexFile {
    struct Record: Sendable {
        var identity: FileIdentity
        /// How many entities the file holds.
        var count: Int
        /// `["<id>",…]`, in the file's order.
        var ids: ArraySlice<UInt8>
        /// `start-end` of each entity's object in the file, space-separated, in the file's order.
        var ranges: ArraySlice<UInt8>
        /// Per field name, `[<value>,…]`: every column of the file, or those a query read.
        var fields: [String: ArraySlice<UInt8>]
        /// The columns hold the file's entities whole (``FieldColumns/whole``).
        var whole: Bool
        /// ``fields`` holds every column of the file, not only those a query asked for.
        var allColumns: Bool

        /// Whether a query can build the file's entities from ``fields`` instead of reading them
        /// from the file: they are whole there, and every column was read.
        var holdsEntities: Bool { whole && allColumns }

        init(identity: FileIdentity, columns: FieldColumns) {
            self.identity = identity
            count = columns.ranges.count
            ids = ArraySlice(columns.ids)
            ranges = ArraySlice(columns.ranges.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: " ").utf8)
            fields = columns.fields.mapValues { ArraySlice($0) }
            (whole, allColumns) = (columns.whole, true)
        }

        init(
            identity: FileIdentity, count: Int, ids: ArraySlice<UInt8>, ranges: ArraySlice<UInt8>, fields: [String: ArraySlice<UInt8>],
            whole: Bool, allColumns: Bool
        ) {
            (self.identity, self.count, self.ids, self.ranges, self.fields) = (identity, count, ids, ranges, fields)
            (self.whole, self.allColumns) = (whole, allColumns)
        }

        /// Each entity's byte range in the file, or nil when the list is damaged.
        func fileRanges() -> [Range<Int>]? {
            if ranges.isEmpty { return count == 0 ? [] : nil }
            var result: [Range<Int>] = []
            result.reserveCapacity(count)
            var number = 0, digits = 0, start: Int?
            for byte in ranges + CollectionOfOne(UInt8(ascii: " ")) {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    guard digits < 18 else { return nil }
                    number = number * 10 + Int(byte - UInt8(ascii: "0"))
                    digits += 1
                case UInt8(ascii: "-") where start == nil && digits > 0:
                    (start, number, digits) = (number, 0, 0)
                case UInt8(ascii: " ") where digits > 0:
                    guard let first = start, first < number, number <= identity.size else { return nil }
                    result.append(first..<number)
                    (start, number, digits) = (nil, 0, 0)
                default:
                    return nil
                }
            }
            return result.count == count ? result : nil
        }
    }

    /// The format's version, on the first line.
    static let version = 3
    static let header = "folio-fields \(version)"
    static let suffix = ".fields"
    /// How long before it is read a file must have last changed for an entry to be made of it.
    static let settleTime: Int64 = 2_000_000_000

    static func path(_ collection: String) -> String { StoreLayout.machinery + "/index/" + collection + suffix }

    /// Whether a file read at `readAt` (nanoseconds since 1970, taken before the read) with this
    /// identity may be recorded.
    static func isSettled(_ identity: FileIdentity, readAt: Int64) -> Bool {
        readAt - identity.lastChange >= settleTime
    }

    struct Contents {
        var entries: [PartitionKey: Record] = [:]
        /// No id is in two of the entries' files.
        var idsAreUnique = false
        /// The columns not read, to read later from the same open file (``columns(_:)``); nil
        /// when every column was read.
        var rest: Rest?
    }

    /// The field sections of an open index that a read left out.
    struct Rest: Sendable {
        fileprivate let file: FileSystem.OpenFile
        /// The entries' keys, in the order of the sections' lines.
        fileprivate let keys: [PartitionKey]
        fileprivate let sections: [(section: Section, offset: Int)]
        /// How many bytes they hold.
        var bytes: Int { sections.reduce(0) { $0 + $1.section.length } }
    }

    /// The entries with the columns `fields` (every column when nil), or none when the file is
    /// missing or not in this form (it is then rebuilt).
    static func read(_ fileSystem: FileSystem, collection: String, fields: Set<String>?) -> Contents {
        do {
            guard let file = try FileSystem.OpenFile(fileSystem, path(collection)) else { return Contents() }
            return try contents(file, fields: fields) ?? Contents()
        } catch {
            return Contents()   // derived data: the query reads the files, and saves a new index
        }
    }

    /// The first line of an index an older Folio wrote (`folio-fields 2`), which queries ignore
    /// and write anew; nil for any other file.
    static func olderFormat(_ bytes: [UInt8]) -> String? {
        let first = String(decoding: bytes.prefix(40).prefix { $0 != 0x0A }, as: UTF8.self)
        guard first.hasPrefix("folio-fields "), first != header, let older = Int(first.dropFirst("folio-fields ".count)), older >= 1,
            older < version
        else { return nil }
        return first
    }

    /// Whether the collection's field index reads whole: every part checks out against its CRC.
    static func isIntact(_ fileSystem: FileSystem, collection: String) -> Bool {
        do {
            guard let file = try FileSystem.OpenFile(fileSystem, path(collection)) else { return true }
            return try contents(file, fields: nil) != nil
        } catch {
            return false
        }
    }

    /// A part of the index read on its own: the partition lines of the header, or a section.
    private enum Part: Sendable {
        case partitions
        case section(Section, offset: Int)

        /// What reading a part gives.
        enum Read: Sendable {
            case partitions([SavedPartitionLine])
            case lines(Section.Kind, [ArraySlice<UInt8>])
        }

        /// Bytes to read: the partition lines, already read, count for nothing.
        var length: Int {
            if case .section(let section, _) = self { section.length } else { 0 }
        }
    }

    fileprivate struct Section: Sendable {
        enum Kind: Hashable, Sendable { case ids, ranges, field(String) }
        var kind: Kind
        var length: Int
        var checksum: UInt32
    }

    private static func contents(_ file: FileSystem.OpenFile, fields wanted: Set<String>?) throws(FolioError) -> Contents? {
        let size = Int(file.identity.size)
        var head = try file.read(0..<min(size, 1 << 20))
        if head.count < size, !head[...].containsHeaderEnd { head = try file.read(0..<size) }
        var position = 0
        func line() -> ArraySlice<UInt8>? {
            guard let end = head[position...].firstIndex(of: 0x0A) else { return nil }
            defer { position = end + 1 }
            return head[position..<end]
        }
        guard let first = line(), first.elementsEqual(header.utf8), let second = line() else { return nil }
        let idsAreUnique: Bool
        switch String(decoding: second, as: UTF8.self) {
        case "ids unique": idsAreUnique = true
        case "ids repeated": idsAreUnique = false
        default: return nil
        }
        var partitionLines: [ArraySlice<UInt8>] = []
        var sections: [Section] = []
        while true {
            let start = position
            guard let text = line() else { return nil }
            if text.first == UInt8(ascii: "."), text.count == 10, text[text.startIndex + 1] == UInt8(ascii: " ") {
                let checksum = head[..<start].withUnsafeBytes { CRC32C.checksum($0) }
                guard UInt32(String(decoding: text.dropFirst(2), as: UTF8.self), radix: 16) == checksum else { return nil }
                break
            }
            if text.first == UInt8(ascii: "P") {
                guard sections.isEmpty else { return nil }
                partitionLines.append(text)
            } else {
                guard let section = sectionLine(text) else { return nil }
                sections.append(section)
            }
        }
        guard sections.first?.kind == .ids, sections.count >= 2, sections[1].kind == .ranges else { return nil }
        // An index cut short, or with bytes added, is not used even where the parts read are whole.
        guard position + sections.reduce(0, { $0 + $1.length }) == size else { return nil }
        var parts: [Part] = [.partitions]
        var skipped: [(section: Section, offset: Int)] = []
        var offset = position
        for section in sections {
            defer { offset += section.length }
            if case .field(let name) = section.kind, let wanted, !wanted.contains(name) {
                skipped.append((section, offset))
                continue
            }
            parts.append(.section(section, offset: offset))
        }
        // Each section read, checked and split on the scan's threads, the largest first, beside the
        // partition lines: megabytes read into fresh memory cost their page faults, which the
        // cores take at once.
        parts.sort { $0.length > $1.length }
        let lineCount = partitionLines.count, headerLines = partitionLines
        let done = parallelMap(parts, width: StoreEngine.scanWidth) { part in
            Result { () throws(FolioError) -> Part.Read? in
                switch part {
                case .partitions:
                    var partitions: [SavedPartitionLine] = []
                    partitions.reserveCapacity(lineCount)
                    for line in headerLines {
                        guard let partition = SavedPartitionLine(line, flagged: true) else { return nil }
                        partitions.append(partition)
                    }
                    return .partitions(partitions)
                case .section(let section, let offset):
                    return try sectionLines(file, section, offset: offset, lineCount: lineCount).map { .lines(section.kind, $0) }
                }
            }
        }
        var partitions: [SavedPartitionLine] = []
        var columns: [Section.Kind: [ArraySlice<UInt8>]] = [:]
        for result in done {
            switch try result.get() {
            case nil: return nil
            case .partitions(let parsed)?: partitions = parsed
            case .lines(let kind, let lines)?:
                guard columns[kind] == nil else { return nil }
                columns[kind] = lines
            }
        }
        guard let ids = columns[.ids], let ranges = columns[.ranges] else { return nil }
        let fieldColumns = columns.compactMap { kind, lines -> (name: String, lines: [ArraySlice<UInt8>])? in
            if case .field(let name) = kind { (name, lines) } else { nil }
        }
        var entries: [PartitionKey: Record] = [:]
        entries.reserveCapacity(partitions.count)
        for (index, partition) in partitions.enumerated() {
            guard entries[partition.key] == nil else { return nil }
            var fields: [String: ArraySlice<UInt8>] = [:]
            fields.reserveCapacity(fieldColumns.count)
            for (name, lines) in fieldColumns {
                let line = lines[index]
                if !(line.count == 1 && line.first == UInt8(ascii: "-")) { fields[name] = line }   // "-": no entity has it
            }
            entries[partition.key] = Record(
                identity: partition.identity, count: partition.count, ids: ids[index], ranges: ranges[index], fields: fields,
                whole: partition.whole == true, allColumns: skipped.isEmpty)
        }
        let rest = skipped.isEmpty ? nil : Rest(file: file, keys: partitions.map(\.key), sections: skipped)
        return Contents(entries: entries, idsAreUnique: idsAreUnique, rest: rest)
    }

    /// A section's lines, read and checked against its CRC; nil when it does not check out or
    /// does not hold a line per file.
    private static func sectionLines(
        _ file: FileSystem.OpenFile, _ section: Section, offset: Int, lineCount: Int
    ) throws(FolioError) -> [ArraySlice<UInt8>]? {
        let bytes = try file.read(offset..<(offset + section.length))
        guard bytes.count == section.length, bytes.withUnsafeBytes({ CRC32C.checksum($0) }) == section.checksum,
            bytes.last == 0x0A || lineCount == 0
        else { return nil }
        let lines = bytes.dropLast().lines()
        guard lines.count == lineCount || (lineCount == 0 && bytes.isEmpty) else { return nil }
        return lines
    }

    /// The columns a read left out (``Contents/rest``), by entry, from the file that read opened
    /// (the same index, whatever replaced it since); nil when one does not check out.
    static func columns(_ rest: Rest) -> [PartitionKey: [String: ArraySlice<UInt8>]]? {
        let read = parallelMap(rest.sections, width: StoreEngine.scanWidth) { part in
            Result { () throws(FolioError) -> [ArraySlice<UInt8>]? in
                try sectionLines(rest.file, part.section, offset: part.offset, lineCount: rest.keys.count)
            }
        }
        var columns: [PartitionKey: [String: ArraySlice<UInt8>]] = [:]
        for (part, lines) in zip(rest.sections, read) {
            guard case .field(let name) = part.section.kind, case .success(let lines?) = lines else { return nil }
            for (key, line) in zip(rest.keys, lines) where !(line.count == 1 && line.first == UInt8(ascii: "-")) {
                columns[key, default: [:]][name] = line
            }
        }
        return columns
    }

    /// An `S <length> <crc> ids`, `S <length> <crc> ranges` or `S <length> <crc> field "<name>"` line.
    private static func sectionLine(_ line: ArraySlice<UInt8>) -> Section? {
        let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].elementsEqual("S".utf8), let length = Int(String(decoding: parts[1], as: UTF8.self)), length >= 0,
            parts[2].count == 8, let checksum = UInt32(String(decoding: parts[2], as: UTF8.self), radix: 16)
        else { return nil }
        switch (String(decoding: parts[3], as: UTF8.self), parts.count) {
        case ("ids", 4): return Section(kind: .ids, length: length, checksum: checksum)
        case ("ranges", 4): return Section(kind: .ranges, length: length, checksum: checksum)
        case ("field", 5):
            guard let values = FieldScanner.values(ArraySlice("[".utf8) + parts[4] + ArraySlice("]".utf8)),
                values.count == 1, case .string(let name) = values[0]
            else { return nil }
            return Section(kind: .field(name), length: length, checksum: checksum)
        default: return nil
        }
    }

    /// A CRC-32C as the index writes it: eight hex digits.
    private static func hex(_ checksum: UInt32) -> String {
        String(checksum, radix: 16).leftPadded(to: 8)
    }

    /// Replaces the index with `entries` (each with every column of its file).
    static func write(_ fileSystem: FileSystem, collection: String, entries: [PartitionKey: Record]) throws(FolioError) {
        let keys = entries.keys.sorted()
        let names = Set(entries.values.flatMap(\.fields.keys)).sorted()
        var head = Array((header + "\n" + (idsAreUnique(entries.values) ? "ids unique" : "ids repeated") + "\n").utf8)
        for key in keys {
            let entry = entries[key]!
            SavedPartitionLine(key: key, identity: entry.identity, count: entry.count, whole: entry.whole).append(to: &head)
        }
        var body: [UInt8] = []
        body.reserveCapacity(
            entries.values.reduce(0) { total, entry in
                total + entry.ids.count + entry.ranges.count + entry.fields.values.reduce(0) { $0 + $1.count + 1 } + 2
            } + keys.count * names.count * 2)
        func section(_ title: String, _ line: (Record) -> ArraySlice<UInt8>) {
            let start = body.count
            for key in keys {
                body.append(contentsOf: line(entries[key]!))
                body.append(0x0A)
            }
            let checksum = body[start...].withUnsafeBytes { CRC32C.checksum($0) }
            head += "S \(body.count - start) \(hex(checksum)) \(title)\n".utf8
        }
        section("ids") { $0.ids }
        section("ranges") { $0.ranges }
        for name in names {
            section("field " + String(decoding: JSONWriter.compact(.string(name)), as: UTF8.self)) { $0.fields[name] ?? ArraySlice("-".utf8) }
        }
        head += (". " + hex(CRC32C.checksum(head)) + "\n").utf8
        try fileSystem.makeDirectoryDurably(StoreLayout.machinery + "/index")
        // Not synced: every part is checked against its CRC when read, so a power cut that tears
        // it costs one query that reads the files and writes it again.
        try AtomicFile(fileSystem: fileSystem).replace(path(collection), with: head + body, synced: false)
    }
}

extension FieldIndexFile {
    /// Whether no id is in two of `entries` (nor twice in one, or unreadable). Ids are compared
    /// as their quoted bytes (no string made of each); a line with an escape makes the answer no,
    /// which only costs the queries the comparison it would have spared.
    static func idsAreUnique(_ entries: some Collection<Record>) -> Bool {
        var seen = Set<QuotedID>(minimumCapacity: entries.reduce(0) { $0 + $1.count })
        for entry in entries {
            guard !QuotedID.hasEscape(entry.ids), let ranges = FieldScanner.stringRanges(entry.ids) else { return false }
            for range in ranges where !seen.insert(QuotedID(entry.ids[range])).inserted { return false }
        }
        return true
    }
}

extension ArraySlice where Element == UInt8 {
    /// The lines of these bytes (split at each newline; after a final newline, an empty line).
    fileprivate func lines() -> [ArraySlice<UInt8>] {
        withUnsafeBufferPointer { buffer in
            var result: [ArraySlice<UInt8>] = [], position = 0
            while let line = buffer.line(from: &position) { result.append(self[(startIndex + line.lowerBound)..<(startIndex + line.upperBound)]) }
            if position == buffer.count { result.append(self[endIndex...]) }   // after a final newline (or of no bytes): an empty line
            return result
        }
    }

    /// Whether the bytes hold a field index header's end (a `. <crc>` line).
    fileprivate var containsHeaderEnd: Bool {
        var index = startIndex
        while let newline = self[index...].firstIndex(of: 0x0A) {
            if newline + 2 < endIndex, self[newline + 1] == UInt8(ascii: "."), self[newline + 2] == UInt8(ascii: " ") { return true }
            index = newline + 1
        }
        return false
    }
}
