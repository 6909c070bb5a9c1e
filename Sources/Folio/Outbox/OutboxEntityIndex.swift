/// Which commands of the outbox are an entity's, without reading the outbox:
/// `.folio/outbox-entities`, derived from the command files and kept by the checkpoint that
/// writes them, so a commit that coalesces, an entity's sync status and an acknowledgement read
/// an entity's own commands only, however many wait (FORMAT.md, "The entity index").
///
/// The file is text with fixed-width lines, so a lookup is a binary search of a few short reads.
/// The first line, `folio-outbox-entities 1 <generation> <count>`, names the journal generation
/// whose files it describes and how many sorted lines follow; each is `<key> <sequence> <check>`:
/// 16 hexadecimal digits of a 64-bit FNV-1a hash of the command's `collection`, a NUL byte and its
/// `entityID`, the 20-digit number of a pending or failed command, and 4 hexadecimal digits, the
/// low 16 bits of the FNV-1a hash of the line's first 37 bytes (a changed digit is damage, not
/// another command); sorted by key, then number. After them, the changes of the checkpoints since
/// the sorted lines were written, in order, one line each: `+ <line>` (now pending or failed) or
/// `- <line>`
/// (sent or gone; the key may be zeros, the number decides). A checkpoint appends its changes
/// (work that grows with what it changed, not with the queue) and rewrites the file sorted once
/// more than ``changeLimit`` changes pile up.
///
/// It is only ever a list of candidates: a reader takes it only when it names the journal's
/// current generation, applies the generation's records on top, and reads each candidate's file
/// (a hash shared by two entities, a file removed by hand: the file decides). A file that does not
/// parse, is cut short or names another generation is ignored (the outbox is then read whole)
/// and written afresh by the next checkpoint. Losing it loses nothing. A command file put into
/// `outbox/` by hand is sent in its turn; the index learns of it when it is next built from the
/// whole outbox.
///
/// An open index is kept for its generation by the outbox book and answers many lookups; it keeps
/// the first ``linesKept`` lines it read (the top of every binary search), so a warm lookup reads
/// a few lines, not one per step of the search.
final class OutboxEntityIndex {
    static let path = ".folio/outbox-entities"
    static let headerLength = 66
    static let lineLength = 43
    static let changeLength = 45
    /// How many change lines the file holds at most before a checkpoint rewrites it sorted.
    static let changeLimit = 1024
    /// How many sorted lines an open index keeps once read (at most 4,096 × 16 bytes).
    static let linesKept = 4096
    private static let magic = "folio-outbox-entities 1 "

    /// One command of an entity: the entity's key and the command's number.
    struct Line: Comparable {
        var key: UInt64
        var sequence: UInt64
        static func < (a: Line, b: Line) -> Bool { (a.key, a.sequence) < (b.key, b.sequence) }
    }

    /// The key of an entity: FNV-1a (64 bits) of its collection, a NUL byte and its id.
    static func key(collection: String, id: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in collection.utf8 + [0] + id.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// The key of a command's entity (nil for a custom command without one).
    static func key(of command: JSONValue) -> UInt64? {
        guard let collection = command["collection"]?.stringValue, let id = command["entityID"]?.stringValue else { return nil }
        return key(collection: collection, id: id)
    }

    /// The index of a generation, open for lookups; nil when there is none for it (none, another
    /// generation's, cut short or damaged).
    /// - Parameters:
    ///   - fileSystem: The store's files.
    ///   - generation: The journal's current generation.
    static func open(in fileSystem: FileSystem, generation: UInt64) throws(FolioError) -> OutboxEntityIndex? {
        guard let file = try FileSystem.OpenFile(fileSystem, path), let count = try header(of: file, generation: generation) else { return nil }
        let sorted = headerLength + count * lineLength
        guard let changes = try changes(of: file, after: sorted) else { return nil }
        return OutboxEntityIndex(file: file, count: count, changes: changes)
    }

    private let file: FileSystem.OpenFile
    /// How many sorted lines the file holds.
    private let count: Int
    /// The change lines after them, in order.
    let changes: [(added: Bool, line: Line)]
    /// The changes folded once, so a lookup's cost does not grow with them: by key, the numbers
    /// added under it with the position of their `+` line; by number, the position of its last
    /// `-` line.
    private let additions: [UInt64: [(position: Int, sequence: UInt64)]]
    private let lastRemoval: [UInt64: Int]
    /// Sorted lines read so far, by position (at most ``linesKept``).
    private var kept: [Int: Line] = [:]

    private init(file: FileSystem.OpenFile, count: Int, changes: [(added: Bool, line: Line)]) {
        (self.file, self.count, self.changes) = (file, count, changes)
        var additions: [UInt64: [(position: Int, sequence: UInt64)]] = [:]
        var lastRemoval: [UInt64: Int] = [:]
        for (position, change) in changes.enumerated() {
            if change.added {
                additions[change.line.key, default: []].append((position, change.line.sequence))
            } else {
                lastRemoval[change.line.sequence] = position
            }
        }
        (self.additions, self.lastRemoval) = (additions, lastRemoval)
    }

    /// The numbers listed under an entity's key (a binary search, then the changes), or nil when
    /// a line read is damaged (then the index is not to be used).
    func sequences(key: UInt64) throws(FolioError) -> [UInt64]? {
        // The first line whose key is not below `key`.
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            guard let line = try line(middle) else { return nil }
            if line.key < key { low = middle + 1 } else { high = middle }
        }
        // The changes, read in order, that concern this key: its own `+` lines and every `-` line
        // (a removal's key may be zeros). Each takes its number out of the list, and a `+` puts it
        // back at the end, so a number is listed where the last such change of it leaves it.
        let added = additions[key] ?? []
        var lastAdded: [UInt64: Int] = [:]
        for addition in added { lastAdded[addition.sequence] = addition.position }
        var found: [UInt64] = []
        var index = low
        while index < count {
            guard let line = try line(index) else { return nil }
            guard line.key == key else { break }
            if lastRemoval[line.sequence] == nil, lastAdded[line.sequence] == nil { found.append(line.sequence) }
            index += 1
        }
        for addition in added where lastAdded[addition.sequence] == addition.position {
            if let removed = lastRemoval[addition.sequence], removed > addition.position { continue }
            found.append(addition.sequence)
        }
        return found
    }

    /// Every pending or failed command the index lists (its sorted lines with its changes applied).
    func allLines() throws(FolioError) -> [Line]? {
        let bytes = try file.read(Self.headerLength..<(Self.headerLength + count * Self.lineLength))
        var lines: [UInt64: Line] = [:]
        lines.reserveCapacity(count)
        for index in 0..<count {
            guard let line = Self.parse(bytes[(index * Self.lineLength)..<((index + 1) * Self.lineLength)]) else { return nil }
            lines[line.sequence] = line
        }
        for change in changes { lines[change.line.sequence] = change.added ? change.line : nil }
        return Array(lines.values)
    }

    /// Writes the index of a generation (replacing the file whole; not synced: a file lost or cut
    /// short by a power cut is ignored by the next reader).
    static func write(_ lines: [Line], generation: UInt64, to fileSystem: FileSystem) throws(FolioError) {
        var bytes = Array(magic.utf8) + digits(generation, 20) + Array(" ".utf8) + digits(UInt64(lines.count), 20) + [0x0A]
        bytes.reserveCapacity(headerLength + lines.count * lineLength)
        bytes += lines.sorted().flatMap(encode)
        try AtomicFile(fileSystem: fileSystem).replace(path, with: bytes, synced: false)
    }

    /// Appends a checkpoint's changes to the index of `old` and stamps it with `new` (appended
    /// first: a crash between leaves it naming `old`, ignored).
    static func append(_ changes: [(added: Bool, line: Line)], in fileSystem: FileSystem, from old: UInt64, to new: UInt64) throws(FolioError) {
        guard let end = try fileSystem.identity(path)?.size else { return }
        let bytes: [UInt8] = changes.flatMap { [$0.added ? 0x2B : 0x2D, 0x20] + encode($0.line) }
        let fd = try fileSystem.openForUpdate(path)
        defer { _ = Platform.close(fd) }
        try fileSystem.write(fd, bytes, at: end, path: path)
        try fileSystem.write(fd, digits(new, 20), at: Int64(magic.utf8.count), path: path)
    }

    /// Says the index, unchanged, describes a new generation too (a checkpoint that changed no
    /// command file): its generation is rewritten in place. A rewrite a crash cuts short leaves
    /// a header that names neither generation, and the index is then ignored.
    static func restamp(in fileSystem: FileSystem, from old: UInt64, to new: UInt64) throws(FolioError) {
        let fd = try fileSystem.openForUpdate(path)
        defer { _ = Platform.close(fd) }
        try fileSystem.write(fd, digits(new, 20), at: Int64(magic.utf8.count), path: path)
    }

    /// Removes the index (a migration rewrites command files behind the checkpoint's back).
    static func forget(in fileSystem: FileSystem) throws(FolioError) {
        if try fileSystem.identity(path) != nil { try fileSystem.unlink(path) }
    }

    // MARK: The bytes

    /// The number of lines, when the header names this generation and the file holds them all.
    private static func header(of file: FileSystem.OpenFile, generation: UInt64) throws(FolioError) -> Int? {
        let bytes = try file.read(0..<headerLength)
        guard bytes.count == headerLength, bytes.starts(with: magic.utf8), bytes.last == 0x0A,
            let stamped = number(bytes[24..<44]), stamped == generation,
            let count = number(bytes[45..<65]), count <= UInt64(Int.max / lineLength),
            file.identity.size >= Int64(headerLength) + Int64(count) * Int64(lineLength)
        else { return nil }
        return Int(count)
    }

    /// The change lines from `offset` to the file's end; nil when they are not whole lines.
    private static func changes(of file: FileSystem.OpenFile, after offset: Int) throws(FolioError) -> [(added: Bool, line: Line)]? {
        let length = Int(file.identity.size) - offset
        guard length % changeLength == 0, length / changeLength <= changeLimit * 2 else { return nil }
        guard length > 0 else { return [] }
        let bytes = try file.read(offset..<(offset + length))
        guard bytes.count == length else { return nil }
        var changes: [(added: Bool, line: Line)] = []
        for start in stride(from: 0, to: length, by: changeLength) {
            let sign = bytes[start]
            guard sign == 0x2B || sign == 0x2D, bytes[start + 1] == 0x20,
                let line = parse(bytes[(start + 2)..<(start + changeLength)])
            else { return nil }
            changes.append((sign == 0x2B, line))
        }
        return changes
    }

    /// The sorted line at `index` (nil: damaged), kept once read while fewer than ``linesKept`` are.
    private func line(_ index: Int) throws(FolioError) -> Line? {
        if let line = kept[index] { return line }
        let start = Self.headerLength + index * Self.lineLength
        guard let line = Self.parse(try file.read(start..<(start + Self.lineLength))[...]) else { return nil }
        if kept.count < Self.linesKept { kept[index] = line }
        return line
    }

    /// A line's bytes: key, number, and a check of both (so a changed digit is damage, not
    /// another command).
    private static func encode(_ line: Line) -> [UInt8] {
        let text = digits(line.key, 16, radix: 16) + [0x20] + digits(line.sequence, 20)
        return text + [0x20] + digits(check(text[...]), 4, radix: 16) + [0x0A]
    }

    /// The low 16 bits of the FNV-1a hash of a line's key and number.
    private static func check(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash & 0xFFFF
    }

    private static func parse(_ bytes: ArraySlice<UInt8>) -> Line? {
        let start = bytes.startIndex
        guard bytes.count == lineLength, bytes[start + 16] == 0x20, bytes[start + 37] == 0x20, bytes.last == 0x0A else { return nil }
        guard let key = number(bytes.prefix(16), radix: 16), let sequence = number(bytes.dropFirst(17).prefix(20)),
            let stated = number(bytes.dropFirst(38).prefix(4), radix: 16), stated == check(bytes.prefix(37))
        else { return nil }
        return Line(key: key, sequence: sequence)
    }

    /// The number written in `bytes`, in lowercase digits of `radix` (10 or 16); nil for any other
    /// byte, or a number over 64 bits.
    private static func number(_ bytes: ArraySlice<UInt8>, radix: UInt64 = 10) -> UInt64? {
        var value: UInt64 = 0
        for byte in bytes {
            let digit: UInt64
            switch byte {
            case 0x30...0x39: digit = UInt64(byte - 0x30)
            case 0x61...0x66 where radix == 16: digit = UInt64(byte - 0x61 + 10)
            default: return nil
            }
            let (times, overflow) = value.multipliedReportingOverflow(by: radix)
            let (sum, carry) = times.addingReportingOverflow(digit)
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }

    /// `value` in `width` digits of `radix`, zeros first.
    private static func digits(_ value: UInt64, _ width: Int, radix: Int = 10) -> [UInt8] {
        Array(String(value, radix: radix).leftPadded(to: width).utf8)
    }
}
