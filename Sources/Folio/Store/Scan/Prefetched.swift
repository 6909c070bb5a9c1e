internal import Foundation

/// A partition file fetched on a worker thread for a scan (StoreEngine+Scan.swift), by the
/// cheapest of its paths: from its field index entry (``fromIndex(_:_:identity:fileSystem:filter:predicate:)``,
/// only the matching entities read from the file), read field by field with a new entry made of
/// it, read field by field without one, or read, parsed and decoded as `E` whole. Each path is
/// taken only where it gives the same answer as the last one; it touches no state but the file's.
struct Prefetched<E: Entity>: Sendable {
    var file: FetchedFile?
    /// The entities that decode and whose `id` field agrees with their key; the others are left
    /// to ``Partition/values(_:coder:undecodable:)``, which reports them.
    var decoded: [String: E] = [:]
    /// When every entity decoded: those the predicate keeps (all without one), in id order; nil
    /// when some did not decode or the predicate threw (the store then decodes and reports).
    var matches: [E]?
    /// A file read field by field, not loaded: its ids, and the entities that match in id order.
    var scanned: (ids: ScannedIDs, matches: [E])?

    /// A field index entry made from this file while it was read (it holds Folio's newest
    /// version of itself and had settled, ``FieldIndexFile``); nil when none could be made.
    var indexEntry: FieldIndexFile.Record?
    /// Filtered on its field index entry: the file was not read whole.
    var fromIndex = false
    /// Filtered and built from its field index entry's columns: the file was not opened.
    var fromColumns = false
    /// The rows the filter selected in a file whose columns hold its entities whole, when the
    /// query has not loaded every column yet: its matches are taken once the query decided where
    /// from (``taking(_:of:_:fileSystem:filter:predicate:)``, StoreEngine+Scan.swift).
    var awaiting: Selection?

    /// Reads the file at `address` and takes what a query needs from it.
    /// - Parameters:
    ///   - filter: The predicate on fields: the file is scanned instead of loaded where it can be,
    ///     and a field index entry is made of it.
    ///   - indexed: The file's field index entry: used instead of the file while the file has
    ///     the entry's identity.
    static func fetch(
        _ address: PartitionAddress, fileSystem: FileSystem, predicate: Predicate<E>?,
        filter: FieldFilter? = nil, written: WrittenHashes? = nil, indexed: FieldIndexFile.Record? = nil,
        identity: FileIdentity? = nil
    ) throws(FolioError) -> Prefetched {
        if let indexed, let filter, let predicate,
            let found = fromIndex(address, indexed, identity: identity, fileSystem: fileSystem, filter: filter, predicate: predicate)
        {
            return found
        }
        let readAt = FileIdentity.now
        guard let (bytes, identity) = try fileSystem.read(address.path) else { return Prefetched(file: nil) }
        // Checked once, whether the file is then scanned or parsed.
        let kept = FetchedFile.KeptCheck(bytes, path: address.path, fileSystem: fileSystem, written: written)
        var entry: FieldIndexFile.Record?
        if filter != nil, kept.isNewest, FieldIndexFile.isSettled(identity, readAt: readAt), let columns = FieldScanner.columns(bytes) {
            entry = FieldIndexFile.Record(identity: identity, columns: columns)
        }
        // A file just taken apart for the index is filtered on those columns, not walked again.
        if let filter, let predicate, let entry,
            let scanned = filtered(entry, filter: filter, predicate: predicate, path: address.path, read: { bytes[$0] })
        {
            return Prefetched(file: nil, scanned: scanned, indexEntry: entry)
        }
        if let filter, let predicate, kept.isNewest, entry == nil, let entries = FieldScanner.entries(bytes, keys: filter.keys) {
            var candidates: [Candidate] = []
            for entry in entries {
                do {
                    if try filter.evaluate(entry.row) { candidates.append((entry.id, bytes[entry.range], entry.row)) }
                } catch {
                    candidates.append((entry.id, bytes[entry.range], nil))   // undetermined: decoded and tested
                }
            }
            if let matches = matching(candidates, filter: filter, predicate: predicate, path: address.path) {
                return Prefetched(file: nil, scanned: (ScannedIDs(entries.map { $0.id }), matches), indexEntry: entry)
            }
        }
        let file = FetchedFile.parse(bytes, identity: identity, path: address.path, fileSystem: fileSystem, checkingKeptVersions: true, kept: kept)
        guard case .success(let contents) = file.contents else { return Prefetched(file: file) }
        var (values, _) = EntityCoder().decodeEach(E.self, from: contents.entities, path: address.path)
        for id in Array(values.keys) where Partition.keyMismatch(id: id, in: contents.entities[id]!, path: address.path) != nil {
            values[id] = nil
        }
        var fetched = Prefetched(file: file, decoded: values, indexEntry: entry)
        if values.count == contents.entities.count {
            let ordered = values.keys.sorted { $0.precedesInKeyOrder($1) }.map { values[$0]! }
            do { fetched.matches = try predicate.map { predicate in try ordered.filter { try predicate.evaluate($0) } } ?? ordered } catch {
                fetched.matches = nil
            }
        }
        return fetched
    }

    /// An entity the filter kept: its id, its object's bytes, and the row the filter held true
    /// (nil when the filter could not decide).
    typealias Candidate = (id: String, object: ArraySlice<UInt8>, row: FieldRow?)

    /// The candidates that match, each parsed and decoded alone, in id order; nil when one of
    /// them does not parse, decode, carry its own id, or makes the predicate throw (the file is
    /// then loaded, and the load reports these).
    ///
    /// A candidate the filter held true whose decoded properties are exactly the values the
    /// filter read (``FieldFilter/agreement(_:)``) matches: the filter computed the predicate on
    /// those very values. Any other is tested against `predicate`, so a property that does not
    /// decode as its field reads (a mapping the probe got wrong) costs time, never a wrong answer.
    static func matching(_ candidates: [Candidate], filter: FieldFilter, predicate: Predicate<E>, path: String) -> [E]? {
        guard !candidates.isEmpty else { return [] }
        let coder = EntityCoder()
        let agrees = filter.agreement(E.self)
        var ids: [String] = [], matches: [E] = []
        ids.reserveCapacity(candidates.count)
        matches.reserveCapacity(candidates.count)
        for (id, object, row) in candidates {
            let json: JSONValue
            do { json = try JSONParser.parse(Array(object)) } catch { return nil }
            guard Partition.keyMismatch(id: id, in: json, path: path) == nil,
                case .success(let entity) = coder.decodeOne(E.self, from: json)
            else { return nil }
            let isMatch: Bool
            if let row, let agrees, agrees(entity, row) {
                isMatch = true
            } else {
                do { isMatch = try predicate.evaluate(entity) } catch { return nil }
            }
            guard isMatch else { continue }
            ids.append(id)
            matches.append(entity)
        }
        // Folio writes a file's entities in id order: sorting is rarely needed.
        var index = 1
        while index < ids.count, ids[index - 1].precedesInKeyOrder(ids[index]) { index += 1 }
        guard index < ids.count else { return matches }
        return zip(ids, matches).sorted { $0.0.precedesInKeyOrder($1.0) }.map { $0.1 }
    }

    /// Gives a partition that holds exactly the file's entities the decoded values.
    func prefill(_ partition: Partition) {
        guard !decoded.isEmpty else { return }
        partition.prefill(decoded)
    }
}
