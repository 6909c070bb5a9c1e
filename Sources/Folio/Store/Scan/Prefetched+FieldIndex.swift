internal import Foundation

/// A partition file fetched from its field index entry (FieldIndexFile.swift): the filter runs on
/// the entry's columns, then the rows it selected are taken from the columns (a file whose columns
/// hold its entities whole, every column loaded) or from the file, by their byte ranges.
extension Prefetched {
    /// The rows of a file the filter selected, each with the row of values it held true (nil:
    /// undetermined, the entity is decoded and tested).
    typealias Selection = [(index: Int, row: FieldRow?)]

    /// The file's ids and matching entities from its field index entry, without reading the file
    /// whole; nil when the file no longer has the entry's identity or anything is unexpected (the
    /// file is then read whole). A file whose columns hold its entities whole but are not all
    /// loaded yet comes back ``awaiting`` its rows' matches.
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
        guard let rows = selected(entry, filter: filter) else { return nil }
        if entry.whole, !entry.allColumns, !rows.isEmpty { return Prefetched(file: nil, fromIndex: true, awaiting: rows) }
        return taking(rows, of: address, entry, fileSystem: fileSystem, filter: filter, predicate: predicate)
    }

    /// The file's ids and the matches among `rows` (from ``selected(_:filter:)``): built from the
    /// entry's columns when it holds the entities whole (the file not opened), read from the file
    /// by their byte ranges otherwise; nil when anything is unexpected.
    static func taking(
        _ rows: Selection, of address: PartitionAddress, _ entry: FieldIndexFile.Record, fileSystem: FileSystem,
        filter: FieldFilter, predicate: Predicate<E>
    ) -> Prefetched? {
        if entry.holdsEntities {
            return matches(rows, of: entry, filter: filter, predicate: predicate, path: address.path, read: nil).map {
                Prefetched(file: nil, scanned: $0, fromIndex: true, fromColumns: true)
            }
        }
        let scanned = matches(rows, of: entry, filter: filter, predicate: predicate, path: address.path) { span in
            do {
                return try fileSystem.read(address.path, range: span, ifIdentity: entry.identity).map { ArraySlice($0) }
            } catch {
                return nil   // the read of the whole file that follows reports it
            }
        }
        return scanned.map { Prefetched(file: nil, scanned: $0, fromIndex: true) }
    }

    /// A file's ids and matching entities from a field index entry of it, the objects of the
    /// entities the filter keeps (or cannot decide) taken through `read` (the file's bytes in a
    /// range, or nil). Nil when anything is unexpected: the file is then read whole.
    static func filtered(
        _ entry: FieldIndexFile.Record, filter: FieldFilter, predicate: Predicate<E>, path: String,
        read: (Range<Int>) -> ArraySlice<UInt8>?
    ) -> (ids: ScannedIDs, matches: [E])? {
        guard let rows = selected(entry, filter: filter) else { return nil }
        return withoutActuallyEscaping(read) { read in matches(rows, of: entry, filter: filter, predicate: predicate, path: path, read: read) }
    }

    /// The rows of the entry the filter selects, on its columns; nil when a column is not what
    /// the entry says.
    static func selected(_ entry: FieldIndexFile.Record, filter: FieldFilter) -> Selection? {
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
        var selection: Selection = []
        var row = FieldRow(values: Array(repeating: nil, count: filter.keys.count))   // one row, refilled
        for index in 0..<entry.count where keeping?[index] ?? true {
            for (slot, column) in columns.enumerated() { row.values[slot] = column?[index] }
            do {
                if try filter.evaluate(row) { selection.append((index, row)) }
            } catch {
                selection.append((index, nil))   // undetermined: decoded and tested
            }
        }
        return selection
    }

    /// The entry's ids and the matches among `rows`: their objects read through `read`, or built
    /// from the entry's columns without it (``objects(_:at:)``); nil when anything is unexpected.
    private static func matches(
        _ rows: Selection, of entry: FieldIndexFile.Record, filter: FieldFilter, predicate: Predicate<E>, path: String,
        read: ((Range<Int>) -> ArraySlice<UInt8>?)?
    ) -> (ids: ScannedIDs, matches: [E])? {
        var found: [Candidate] = []
        if !rows.isEmpty, read == nil {
            guard let objects = objects(entry, at: rows.map(\.index)) else { return nil }
            for ((_, row), (id, object)) in zip(rows, objects) { found.append((id, object, row)) }
        } else if let read, let first = rows.first?.index, let last = rows.last?.index {
            guard let ids = FieldScanner.stringRanges(entry.ids), ids.count == entry.count, let ranges = entry.fileRanges() else { return nil }
            let span = ranges[first].lowerBound..<ranges[last].upperBound
            guard let bytes = read(span), bytes.count == span.count else { return nil }
            for (index, row) in rows {
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
        // Each line walked up to the last row asked for only.
        guard entry.holdsEntities, let last = rows.last, last < entry.count, let ids = FieldScanner.valueRanges(entry.ids, count: last + 1) else { return nil }
        var columns: [(member: [UInt8], line: ArraySlice<UInt8>, values: [Range<Int>])] = []
        columns.reserveCapacity(entry.fields.count)
        var length = 2
        for (name, line) in entry.fields {
            guard let values = FieldScanner.valueRanges(line, count: last + 1) else { return nil }
            var member: [UInt8] = []
            JSONWriter.appendString(name, to: &member)
            member.append(UInt8(ascii: ":"))
            columns.append((member, line, values))
            length += member.count + 1
        }
        var objects: [(id: String, object: ArraySlice<UInt8>)] = []
        objects.reserveCapacity(rows.count)
        for row in rows {
            guard let id = FieldScanner.string(entry.ids, at: ids[row]) else { return nil }
            var object: [UInt8] = []
            object.reserveCapacity(length + columns.reduce(0) { $0 + $1.values[row].count })
            object.append(UInt8(ascii: "{"))
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
}
