/// The ids of the saved id index (`.folio/index/<collection>`, IndexFile.swift) whose files were
/// unchanged when the id index was built, found in place in the file's bytes: a hash table of
/// their lines, with no string made of each (a thirty-year store lists 300,000, and a table of
/// strings took most of a process's second commit). Never changed once built: the id index
/// (IdIndex.swift) keeps what changed since on top of it. Owned by the id index; a class, so that
/// asking it for an id copies no arrays.
final class SavedIDTable {
    /// The partitions whose entries the table holds, in the file's order.
    let keys: [PartitionKey]
    private let positions: [PartitionKey: Int]
    private let bytes: [UInt8]
    /// Per id line: where it starts and ends in `bytes`, and its partition (index in `keys`).
    private let starts: [UInt32], ends: [UInt32], owners: [UInt32]
    /// Per partition (index in `keys`): its lines (indexes into `starts`).
    private let lines: [Range<Int>]
    /// Open addressing over the lines: a line's index + 1 per slot, 0 for none; a power of two.
    private let slots: [UInt32]

    /// Builds the table of `entries` (each partition's key and the byte ranges of its id lines in
    /// `bytes`, as ``IndexFile/walk(_:_:)`` gives them).
    /// - Returns: The table (nil when the file is too large to address with 32 bits), and each id
    ///   listed more than once with every partition that lists it: the table answers for none
    ///   of those (its caller reads their files).
    static func build(bytes: [UInt8], entries: [(key: PartitionKey, ids: [Range<Int>])]) -> (table: SavedIDTable, twice: [String: [PartitionKey]])? {
        guard bytes.count < Int(UInt32.max) else { return nil }
        let count = entries.reduce(0) { $0 + $1.ids.count }
        var starts: [UInt32] = [], ends: [UInt32] = [], owners: [UInt32] = []
        starts.reserveCapacity(count)
        ends.reserveCapacity(count)
        owners.reserveCapacity(count)
        var lines: [Range<Int>] = []
        lines.reserveCapacity(entries.count)
        for (owner, entry) in entries.enumerated() {
            let first = starts.count
            for range in entry.ids {
                starts.append(UInt32(range.lowerBound))
                ends.append(UInt32(range.upperBound))
                owners.append(UInt32(owner))
            }
            lines.append(first..<starts.count)
        }
        var capacity = 16
        while capacity < count * 2 { capacity <<= 1 }
        var slots = [UInt32](repeating: 0, count: capacity)
        var twice: [String: [PartitionKey]] = [:]
        bytes.withUnsafeBufferPointer { buffer in
            for line in 0..<count {
                let id = UnsafeBufferPointer(rebasing: buffer[Int(starts[line])..<Int(ends[line])])
                var slot = Int(truncatingIfNeeded: hash(id)) & (capacity - 1)
                while slots[slot] != 0 {
                    let other = Int(slots[slot]) - 1
                    if id.elementsEqual(buffer[Int(starts[other])..<Int(ends[other])]) {
                        let text = String(decoding: id, as: UTF8.self)
                        if twice[text] == nil { twice[text] = [entries[Int(owners[other])].key] }
                        twice[text]!.append(entries[Int(owners[line])].key)
                        break
                    }
                    slot = (slot + 1) & (capacity - 1)
                }
                if slots[slot] == 0 { slots[slot] = UInt32(line + 1) }
            }
        }
        let keys = entries.map(\.key)
        let positions = Dictionary(keys.enumerated().map { ($1, $0) }) { first, _ in first }
        let table = SavedIDTable(
            keys: keys, positions: positions, bytes: bytes, starts: starts, ends: ends, owners: owners, lines: lines, slots: slots)
        return (table, twice)
    }

    private init(
        keys: [PartitionKey], positions: [PartitionKey: Int], bytes: [UInt8], starts: [UInt32], ends: [UInt32], owners: [UInt32],
        lines: [Range<Int>], slots: [UInt32]
    ) {
        (self.keys, self.positions, self.bytes, self.starts, self.ends, self.owners, self.lines, self.slots) =
            (keys, positions, bytes, starts, ends, owners, lines, slots)
    }

    /// FNV-1a, 64 bits: ids are short, and the table only needs them spread.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// The partition whose entry lists `id` (for an id listed twice, one of them: see ``build(bytes:entries:)``).
    func key(of id: String) -> PartitionKey? {
        var id = id
        return id.withUTF8 { id in
            bytes.withUnsafeBufferPointer { buffer in
                let mask = slots.count - 1
                var slot = Int(truncatingIfNeeded: Self.hash(id)) & mask
                while slots[slot] != 0 {
                    let line = Int(slots[slot]) - 1
                    if buffer[Int(starts[line])..<Int(ends[line])].elementsEqual(id) { return keys[Int(owners[line])] }
                    slot = (slot + 1) & mask
                }
                return nil
            }
        }
    }

    /// Whether the table holds the entry of the partition `key`.
    func holds(_ key: PartitionKey) -> Bool { positions[key] != nil }

    /// The ids the entry of the partition `key` lists (none when the table does not hold it).
    func ids(at key: PartitionKey) -> [String] {
        guard let position = positions[key] else { return [] }
        return lines[position].map { line in String(decoding: bytes[Int(starts[line])..<Int(ends[line])], as: UTF8.self) }
    }

    /// How many ids the entry of the partition `key` lists.
    func count(at key: PartitionKey) -> Int { positions[key].map { lines[$0].count } ?? 0 }

    /// Appends the id lines of the partition `key`'s entry, each with its newline, as the file had them.
    func appendLines(at key: PartitionKey, to output: inout [UInt8]) {
        guard let position = positions[key] else { return }
        for line in lines[position] {
            output.append(contentsOf: bytes[Int(starts[line])..<Int(ends[line])])
            output.append(0x0A)
        }
    }
}
