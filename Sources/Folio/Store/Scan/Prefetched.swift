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

    /// The file's ids and matching entities from its field index entry, reading from the file
    /// only the objects of the entities the filter keeps (or cannot decide); nil when the file no
    /// longer has the entry's identity or anything is unexpected (the file is then read whole).
    /// `identity`: the file's, when it was taken already during this query (``IdentityPrefetch``).
    static func fromIndex(
        _ address: PartitionAddress, _ entry: FieldIndexFile.Record, identity: FileIdentity?, fileSystem: FileSystem,
        filter: FieldFilter, predicate: Predicate<E>
    ) -> Prefetched? {
        do {
            guard try (identity ?? fileSystem.identity(address.path)) == entry.identity else { return nil }
        } catch {
            return nil   // the read that follows reports it
        }
        if entry.holdsEntities {
            return filtered(entry, filter: filter, predicate: predicate, path: address.path, read: nil).map {
                Prefetched(file: nil, scanned: $0, fromIndex: true, fromColumns: true)
            }
        }
        let scanned = filtered(entry, filter: filter, predicate: predicate, path: address.path) { span in
            do {
                return try fileSystem.read(address.path, range: span, ifIdentity: entry.identity).map { ArraySlice($0) }
            } catch {
                return nil   // the read of the whole file that follows reports it
            }
        }
        return scanned.map { Prefetched(file: nil, scanned: $0, fromIndex: true) }
    }

    /// A file's ids and matching entities from a field index entry of it: the filter runs on the
    /// entry's columns, and only the objects of the entities it keeps (or cannot decide) are
    /// taken from the file, through `read` (the file's bytes in a range, or nil), or, without
    /// `read`, built from the columns of an entry that holds them whole
    /// (``FieldIndexFile/Record/holdsEntities``). Nil when anything is unexpected: the file is
    /// then read whole.
    static func filtered(
        _ entry: FieldIndexFile.Record, filter: FieldFilter, predicate: Predicate<E>, path: String,
        read: ((Range<Int>) -> ArraySlice<UInt8>?)?
    ) -> (ids: ScannedIDs, matches: [E])? {
        // The ids are taken apart only for a file with candidates: otherwise checking that the
        // line holds `count` strings is enough (the scan may never ask for them).
        guard FieldScanner.holdsStrings(entry.ids, count: entry.count) else { return nil }
        // The rows that may meet what the predicate requires (a word in a string), found
        // on the columns' bytes; only they are read into values and evaluated.
        var keeping: [Bool]?
        for requirement in filter.requirements {
            let rows: [Bool]?
            switch requirement {
            case .word(let slot, let word):
                guard let line = entry.fields[filter.keys[slot]] else { continue }   // none has it: undetermined
                rows = FieldScanner.rows(line, mayContain: word, count: entry.count)
            }
            guard let rows else { return nil }
            keeping = keeping.map { zip($0, rows).map { $0 && $1 } } ?? rows
            if keeping?.contains(true) == false { break }
        }
        var columns: [[FieldValue]?] = []
        if keeping?.contains(true) != false {
            for key in filter.keys {
                guard let line = entry.fields[key] else {
                    columns.append(nil)   // no entity of the file has it
                    continue
                }
                guard let values = FieldScanner.values(line, keeping: keeping), values.count == entry.count else { return nil }
                columns.append(values)
            }
        }
        // Each candidate with the row the filter held true (nil: undetermined).
        var candidates: [(index: Int, row: FieldRow?)] = []
        var row = FieldRow(values: Array(repeating: nil, count: filter.keys.count))   // one row, refilled
        for index in 0..<entry.count where keeping?[index] ?? true {
            for (slot, column) in columns.enumerated() { row.values[slot] = column?[index] }
            do {
                if try filter.evaluate(row) { candidates.append((index, row)) }
            } catch {
                candidates.append((index, nil))   // undetermined: decoded and tested
            }
        }
        var found: [Candidate] = []
        if !candidates.isEmpty, read == nil {
            guard let objects = objects(entry, at: candidates.map(\.index)) else { return nil }
            for ((_, row), (id, object)) in zip(candidates, objects) { found.append((id, object, row)) }
        } else if let read, let first = candidates.first?.index, let last = candidates.last?.index {
            guard let ids = FieldScanner.stringRanges(entry.ids), ids.count == entry.count, let ranges = entry.fileRanges() else { return nil }
            let span = ranges[first].lowerBound..<ranges[last].upperBound
            guard let bytes = read(span), bytes.count == span.count else { return nil }
            for (index, row) in candidates {
                guard let id = FieldScanner.string(entry.ids, at: ids[index]) else { return nil }
                let start = bytes.startIndex + ranges[index].lowerBound - span.lowerBound
                found.append((id, bytes[start..<(start + ranges[index].count)], row))
            }
        }
        guard let matches = matching(found, filter: filter, predicate: predicate, path: path) else { return nil }
        return (ScannedIDs(line: entry.ids), matches)
    }

    /// The ids and JSON objects of the entities at `rows` of a file, built from the columns of an
    /// entry that holds them whole: each member's value copied byte for byte from its column, so
    /// each object parses as the file's does (the same members and values; the order and spaces
    /// differ, which the parser ignores). Nil when a line is not what the entry says.
    private static func objects(_ entry: FieldIndexFile.Record, at rows: [Int]) -> [(id: String, object: ArraySlice<UInt8>)]? {
        guard entry.holdsEntities, let ids = FieldScanner.stringRanges(entry.ids), ids.count == entry.count else { return nil }
        var columns: [(member: [UInt8], line: ArraySlice<UInt8>, values: [Range<Int>])] = []
        columns.reserveCapacity(entry.fields.count)
        for (name, line) in entry.fields {
            guard let values = FieldScanner.valueRanges(line), values.count == entry.count else { return nil }
            var member: [UInt8] = []
            JSONWriter.appendString(name, to: &member)
            member.append(UInt8(ascii: ":"))
            columns.append((member, line, values))
        }
        var objects: [(id: String, object: ArraySlice<UInt8>)] = []
        objects.reserveCapacity(rows.count)
        for row in rows {
            guard let id = FieldScanner.string(entry.ids, at: ids[row]) else { return nil }
            var object: [UInt8] = [UInt8(ascii: "{")]
            for (member, line, values) in columns {
                if object.count > 1 { object.append(UInt8(ascii: ",")) }
                object += member
                object += line[values[row]]
            }
            object.append(UInt8(ascii: "}"))
            objects.append((id, ArraySlice(object)))
        }
        return objects
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
            if let row, let agrees, agrees(entity, row) {
                ids.append(id)
                matches.append(entity)
                continue
            }
            do {
                if try predicate.evaluate(entity) {
                    ids.append(id)
                    matches.append(entity)
                }
            } catch {
                return nil
            }
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
