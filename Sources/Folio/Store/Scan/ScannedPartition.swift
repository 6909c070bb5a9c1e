/// One partition of a scan, as ``StoreEngine/forEachPartition(_:decoding:matching:filter:scannable:_:)``
/// hands it over.
enum ScannedPartition<E: Entity> {
    /// In memory (loaded now or before); with the matching entities in id order when they were
    /// decoded and filtered while the file was fetched. `vouched`: it holds exactly the entities
    /// of a file that a field index holding no id twice has an entry of (``DuplicateScan``).
    case loaded(Partition, matches: [E]?, vouched: Bool)
    /// Read field by field and not loaded: the file's ids and the entities that match, in id order.
    /// `vouched`: read from a field index that holds no id twice (``DuplicateScan``).
    case scanned(PartitionAddress, ids: ScannedIDs, matches: [E], vouched: Bool)
}

/// The ids of a file read field by field: as read from the file, or a field index's ids line,
/// made into strings only when asked for (a scan whose files the index vouches for never asks).
struct ScannedIDs: Sendable {
    /// The ids as strings, when they were read as such.
    let parsed: [String]?
    /// A field index's ids line.
    let line: ArraySlice<UInt8>

    init(_ ids: [String]) {
        (parsed, line) = (ids, [])
    }

    /// A field index's `["…",…]` line, already checked to be one.
    init(line: ArraySlice<UInt8>) {
        (parsed, self.line) = (nil, line)
    }

    /// Where each id lies in ``line`` (with its quotes).
    var ranges: [Range<Int>] { FieldScanner.stringRanges(line) ?? [] }

    var all: [String] { parsed ?? FieldScanner.strings(line) ?? [] }
}
