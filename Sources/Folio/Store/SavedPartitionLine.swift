internal import Foundation

/// The line that opens a partition file's entry in the saved indexes (FORMAT.md): in the id index
/// (`.folio/index/<collection>`) `P <key> <device> <inode> <size> <modified ns> <changed ns> <count>`,
/// and in the field index (`.folio/index/<collection>.fields`) the same with `<whole>` (0 or 1)
/// after the count. Read and written byte by byte: a thirty-year index has eleven thousand.
struct SavedPartitionLine: Equatable {
    var key: PartitionKey
    /// The file's identity when its entry was made: the entry holds only while the file has it.
    var identity: FileIdentity
    /// How many entities (id lines, or column rows) the entry has.
    var count: Int
    /// The field index's flag (FieldIndexFile.swift); nil in the id index, whose lines have none.
    var whole: Bool?

    init(key: PartitionKey, identity: FileIdentity, count: Int, whole: Bool? = nil) {
        (self.key, self.identity, self.count, self.whole) = (key, identity, count, whole)
    }

    /// Reads a line (without its newline); nil unless it is in the form above, with the flag when
    /// `flagged` and without it otherwise, one space between fields.
    init?(_ line: UnsafeBufferPointer<UInt8>, flagged: Bool) {
        let space = UInt8(ascii: " ")
        guard line.count > 2, line[0] == UInt8(ascii: "P"), line[1] == space,
            let end = line[2...].firstIndex(of: space),
            case let text = String(decoding: UnsafeBufferPointer(rebasing: line[2..<end]), as: UTF8.self),
            let key = PartitionKey.day(parsing: text) ?? PartitionKey.month(parsing: text)
        else { return nil }
        // Device, inode, size, mtime, ctime (times before 1970 are negative), count[, whole].
        var numbers: (UInt64, UInt64, Int64, Int64, Int64, Int64, Int64) = (0, 0, 0, 0, 0, 0, 0)
        let expected = flagged ? 7 : 6
        var found = 0, position = end + 1
        while found < expected {
            var magnitude: UInt64 = 0, digits = 0, negative = false
            if position < line.count, line[position] == UInt8(ascii: "-"), found == 3 || found == 4 {
                negative = true
                position += 1
            }
            while position < line.count, line[position] != space {
                let byte = line[position]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 19 else { return nil }
                magnitude = magnitude * 10 + UInt64(byte - UInt8(ascii: "0"))
                digits += 1
                position += 1
            }
            guard digits > 0, found < 2 || magnitude <= UInt64(Int64.max) else { return nil }
            let signed = negative ? -Int64(magnitude) : Int64(truncatingIfNeeded: magnitude)
            switch found {
            case 0: numbers.0 = magnitude
            case 1: numbers.1 = magnitude
            case 2: numbers.2 = signed
            case 3: numbers.3 = signed
            case 4: numbers.4 = signed
            case 5: numbers.5 = signed
            default: numbers.6 = signed
            }
            found += 1
            // One space between fields, none after the last.
            if found < expected {
                guard position < line.count - 1, line[position] == space else { return nil }
                position += 1
            }
        }
        guard position == line.count, !flagged || numbers.6 <= 1 else { return nil }
        self.init(
            key: key,
            identity: FileIdentity(
                device: numbers.0, inode: numbers.1, size: numbers.2, modified: numbers.3, changed: numbers.4, isDirectory: false),
            count: Int(numbers.5), whole: flagged ? numbers.6 == 1 : nil)
    }

    /// Reads a line held in an array (see ``init(_:flagged:)-(UnsafeBufferPointer<UInt8>,_)``).
    init?(_ line: ArraySlice<UInt8>, flagged: Bool) {
        guard let read = line.withUnsafeBufferPointer({ SavedPartitionLine($0, flagged: flagged) }) else { return nil }
        self = read
    }

    /// The line, with its newline, appended to `bytes`.
    func append(to bytes: inout [UInt8]) {
        var text = "P \(key.text) \(identity.device) \(identity.inode) \(identity.size) \(identity.modified) \(identity.changed) \(count)"
        if let whole { text += whole ? " 1" : " 0" }
        text += "\n"
        bytes.append(contentsOf: text.utf8)
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// The line that starts at `position` (to its newline, or to the end), moving `position` past
    /// its newline; nil once `position` reaches the end. `memchr` finds the newline.
    func line(from position: inout Int) -> Range<Int>? {
        guard position < count, let base = baseAddress else { return nil }
        let end = memchr(base + position, 0x0A, count - position).map { base.distance(to: $0.assumingMemoryBound(to: UInt8.self)) } ?? count
        defer { position = end + 1 }
        return position..<end
    }
}
