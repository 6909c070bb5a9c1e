/// Reads the entities of a partition file without building them: for each entity its id, where its
/// JSON object lies in the file, and the scalar values of a few top-level fields (``FieldRow``),
/// so a ``FieldFilter`` can pick the entities to parse and decode.
///
/// Meant for files the store already parsed whole once (their identity is the one the id index
/// recorded): it checks the shape it walks, not every rule of the format, and gives up (nil) on
/// anything unexpected, leaving the file to the full parser, which reports what is wrong.
struct FieldScanner {
    struct Entry {
        var id: String
        /// The bytes of the entity's JSON object.
        var range: Range<Int>
        var row: FieldRow
    }

    /// The entities of the file at `bytes`, with the values of `keys`; nil when the file is not
    /// shaped as the scanner expects.
    static func entries(_ bytes: [UInt8], keys: [String]) -> [Entry]? {
        let wanted = keys.map { Array($0.utf8) }
        return bytes.withUnsafeBufferPointer { buffer in
            var scanner = Walker(bytes: buffer)
            return scanner.file(wanted: wanted)
        }
    }
}

/// A partition file taken apart by field, for the field index (FieldIndexFile.swift): its ids,
/// where each entity's object lies in the file, and for each scalar top-level field the values of
/// every entity, in the file's order, copied byte for byte (so they read as they read in the file).
struct FieldColumns: Sendable {
    /// `["<id>",…]`, each id as it is quoted in the file.
    var ids: [UInt8]
    var ranges: [Range<Int>]
    /// Per field name, `[<value>,…]`: its string, boolean or number value in each entity, or
    /// `null` where the entity has no such field or another kind of value there.
    var fields: [String: [UInt8]]
    /// Every entity has every field of the file, each a string, a number or a boolean: the
    /// columns hold the entities whole (no `null` in any column).
    var whole: Bool
}

extension FieldScanner {
    /// The columns of the file at `bytes`; nil when the file is not shaped as the scanner expects.
    static func columns(_ bytes: [UInt8]) -> FieldColumns? {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = Walker(bytes: buffer)
            guard let (ids, ranges, values) = scanner.columns() else { return nil }
            // `[a,b,…]` of the values' bytes as they are in the file, `null` for none.
            func line(_ items: [Range<Int>?]) -> [UInt8] {
                var line: [UInt8] = [UInt8(ascii: "[")]
                for (index, item) in items.enumerated() {
                    if index > 0 { line.append(UInt8(ascii: ",")) }
                    if let item { line.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[item])) } else { line.append(contentsOf: "null".utf8) }
                }
                line.append(UInt8(ascii: "]"))
                return line
            }
            let fields = values.mapValues { column in line(ranges.indices.map { $0 < column.count ? column[$0] : nil }) }
            let whole = values.values.allSatisfy { column in column.count == ranges.count && !column.contains(nil) }
            return FieldColumns(ids: line(ids), ranges: ranges, fields: fields, whole: whole)
        }
    }

    /// The strings of a `["…",…]` line (a field index's ids); nil when it is not one.
    static func strings(_ line: ArraySlice<UInt8>) -> [String]? {
        guard let values = values(line) else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(values.count)
        for value in values {
            guard case .string(let text) = value else { return nil }
            strings.append(text)
        }
        return strings
    }

    /// Where each string of a `["…",…]` line lies in it (with its quotes); nil when it is not
    /// such a line or a string is not valid.
    static func stringRanges(_ line: ArraySlice<UInt8>) -> [Range<Int>]? {
        line.withUnsafeBufferPointer { buffer in
            var scanner = Walker(bytes: buffer)
            return scanner.stringArray()?.map { ($0.lowerBound + line.startIndex)..<($0.upperBound + line.startIndex) }
        }
    }

    /// The string at `range` of `line` (one of ``stringRanges(_:)``).
    static func string(_ line: ArraySlice<UInt8>, at range: Range<Int>) -> String? {
        guard case .string(let text)? = values(ArraySlice("[".utf8) + line[range] + ArraySlice("]".utf8))?.first else { return nil }
        return text
    }

    /// The values of a `[<value>,…]` line (a field index's column); nil when it is not one.
    /// With `keeping`, only the values where it is true are read, the others skipped and given
    /// as ``FieldValue/other``.
    static func values(_ line: ArraySlice<UInt8>, keeping: [Bool]? = nil) -> [FieldValue]? {
        line.withUnsafeBufferPointer { buffer in
            var scanner = Walker(bytes: buffer)
            return scanner.scalarArray(keeping: keeping)
        }
    }

    /// Where each of the first `count` values of a `[<value>,…]` line lies in it (indices of
    /// `line`; the rest of the line is not walked); nil when it does not start so.
    static func valueRanges(_ line: ArraySlice<UInt8>, count: Int) -> [Range<Int>]? {
        line.withUnsafeBufferPointer { buffer in
            var scanner = Walker(bytes: buffer)
            return scanner.valueArray(count: count)?.map { ($0.lowerBound + line.startIndex)..<($0.upperBound + line.startIndex) }
        }
    }

    /// ``rows(_:mayContain:count:)`` read value by value, for any line.
    static func rowsWalked(_ line: UnsafeBufferPointer<UInt8>, mayContain word: SearchWord) -> [Bool]? {
        var scanner = Walker(bytes: line)
        return scanner.rows(mayContain: word)
    }
}

extension Array where Element == Range<Int>? {
    /// Appends nils up to `count` elements.
    fileprivate mutating func padded(to count: Int) {
        if self.count < count { append(contentsOf: repeatElement(nil, count: count - self.count)) }
    }
}

private struct Walker {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    mutating func file(wanted: [[UInt8]]) -> [FieldScanner.Entry]? {
        entitiesMember { $0.entities(wanted: wanted) }
    }

    /// Walks an object's members (after spaces): `each` gets the member's key, the position just
    /// past its colon, and must read the value; false when the bytes are not such an object or
    /// `each` fails.
    private mutating func members(_ each: (inout Walker, ScannedString) -> Bool) -> Bool {
        guard consume(UInt8(ascii: "{")) else { return false }
        var first = true
        while true {
            skipSpace()
            if peek == UInt8(ascii: "}") {
                position += 1
                return true
            }
            if !first { guard consume(UInt8(ascii: ",")) else { return false } }
            first = false
            guard let key = string(), consume(UInt8(ascii: ":")) else { return false }
            skipSpace()
            guard each(&self, key) else { return false }
        }
    }

    /// Walks an array that fills the buffer (spaces around it allowed): `each` reads one element.
    private mutating func elements(_ each: (inout Walker) -> Bool) -> Bool {
        guard consume(UInt8(ascii: "[")) else { return false }
        skipSpace()
        if peek == UInt8(ascii: "]") {
            position += 1
        } else {
            while true {
                skipSpace()
                guard each(&self) else { return false }
                skipSpace()
                if peek == UInt8(ascii: "]") { position += 1; break }
                guard consume(UInt8(ascii: ",")) else { return false }
            }
        }
        skipSpace()
        return position == bytes.count
    }

    /// Walks the file's top-level object, `read` taking the value of its one `entities` member;
    /// nil when the file is not one such object or `read` fails.
    private mutating func entitiesMember<T>(_ read: (inout Walker) -> T?) -> T? {
        var found: T?
        let walked = members { walker, key in
            guard !key.escaped, key.raw.elementsEqual("entities".utf8) else { return walker.skipValue() }
            guard found == nil, let value = read(&walker) else { return false }
            found = value
            return true
        }
        skipSpace()
        return walked && position == bytes.count ? found : nil
    }

    private mutating func entities(wanted: [[UInt8]]) -> [FieldScanner.Entry]? {
        var entries: [FieldScanner.Entry] = []
        let walked = members { walker, id in
            guard let idText = id.text else { return false }
            let start = walker.position
            guard let row = walker.entity(wanted: wanted) else { return false }
            entries.append(FieldScanner.Entry(id: idText, range: start..<walker.position, row: row))
            return true
        }
        return walked ? entries : nil
    }

    /// One entity's object: the wanted top-level fields' values, the rest skipped.
    private mutating func entity(wanted: [[UInt8]]) -> FieldRow? {
        var row = FieldRow(values: Array(repeating: nil, count: wanted.count))
        let walked = members { walker, key in
            let slots: [Int]
            if key.escaped {
                guard let text = key.text else { return false }
                slots = wanted.indices.filter { wanted[$0].elementsEqual(text.utf8) }
            } else {
                slots = wanted.indices.filter { wanted[$0].elementsEqual(key.raw) }
            }
            guard !slots.isEmpty else { return walker.skipValue() }
            guard let value = walker.scalar() else { return false }
            for slot in slots { row.values[slot] = value }
            return true
        }
        return walked ? row : nil
    }

    /// The file's ids (their quoted bytes), entity ranges, and each scalar field's values per
    /// entity (byte ranges; nil where absent or not a scalar).
    mutating func columns() -> ([Range<Int>], [Range<Int>], [String: [Range<Int>?]])? {
        entitiesMember { $0.entityColumns() }
    }

    private mutating func entityColumns() -> ([Range<Int>], [Range<Int>], [String: [Range<Int>?]])? {
        var ids: [Range<Int>] = [], ranges: [Range<Int>] = [], fields: [String: [Range<Int>?]] = [:]
        let walked = members { walker, id in
            guard id.text != nil else { return false }
            ids.append(walker.range(of: id))
            let start = walker.position
            let entity = ranges.count
            let fieldsWalked = walker.members { walker, key in
                guard let name = key.text else { return false }
                let valueStart = walker.position
                guard let value = walker.scalar() else { return false }
                let isScalar: Bool
                if case .other = value { isScalar = false } else { isScalar = true }
                // The last of two members with one name counts, as in the scanner and the parser.
                fields[name, default: []].padded(to: entity + 1)
                fields[name]![entity] = isScalar ? valueStart..<walker.position : nil
                return true
            }
            guard fieldsWalked else { return false }
            ranges.append(start..<walker.position)
            return true
        }
        return walked ? (ids, ranges, fields) : nil
    }

    /// Where a string the walker read lies in its bytes, with its quotes.
    private func range(of string: ScannedString) -> Range<Int> {
        let start = bytes.baseAddress.map { string.quoted.baseAddress.map($0.distance(to:)) ?? 0 } ?? 0
        return start..<(start + string.quoted.count)
    }

    /// The first `count` values of a `[<value>,…]` array: where each lies.
    mutating func valueArray(count: Int) -> [Range<Int>]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(count)
        while ranges.count < count {
            if !ranges.isEmpty { guard consume(UInt8(ascii: ",")) else { return nil } }
            skipSpace()
            let start = position
            guard skipValue() else { return nil }
            ranges.append(start..<position)
        }
        return ranges
    }

    /// A `["…",…]` array filling the buffer: where each string lies (with its quotes).
    mutating func stringArray() -> [Range<Int>]? {
        var ranges: [Range<Int>] = []
        let walked = elements { walker in
            guard let string = walker.string(), !string.escaped || string.text != nil else { return false }
            ranges.append(walker.range(of: string))
            return true
        }
        return walked ? ranges : nil
    }

    /// A `[<scalar>,…]` array filling the buffer (spaces around it allowed); the values where
    /// `keeping` is false skipped, as ``FieldValue/other``.
    mutating func scalarArray(keeping: [Bool]?) -> [FieldValue]? {
        var values: [FieldValue] = []
        if let keeping { values.reserveCapacity(keeping.count) }
        let walked = elements { walker in
            if let keeping {
                guard values.count < keeping.count else { return false }
                if !keeping[values.count] {
                    values.append(.other)
                    return walker.skipValue()
                }
            }
            guard let value = walker.scalar() else { return false }
            values.append(value)
            return true
        }
        return walked ? values : nil
    }

    /// ``FieldScanner/rowsWalked(_:mayContain:)``.
    mutating func rows(mayContain word: SearchWord) -> [Bool]? {
        var rows: [Bool] = []
        let walked = elements { walker in
            guard walker.peek == UInt8(ascii: "\"") else {
                rows.append(true)
                return walker.skipValue()
            }
            guard let string = walker.string() else { return false }
            rows.append(string.escaped || !TextSearch.plainBytes(string.raw) || TextSearch.contains(string.raw, word))
            return true
        }
        return walked ? rows : nil
    }

    /// A value read for a filter: strings, booleans and numbers as they are; anything else
    /// (null, an object, an array) skipped and marked ``FieldValue/other``.
    private mutating func scalar() -> FieldValue? {
        guard let next = peek else { return nil }
        switch next {
        case UInt8(ascii: "\""):
            guard let text = string()?.text else { return nil }
            return .string(text)
        case UInt8(ascii: "t"):
            return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"):
            return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = position
            while position < bytes.count, Self.isNumberByte(bytes[position]) { position += 1 }
            return .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
        default:
            return skipValue() ? .other : nil
        }
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return false }
        position += count
        return true
    }

    /// A string at the current position (after spaces): its raw bytes between the quotes, and
    /// whether they hold escapes.
    private mutating func string() -> ScannedString? {
        skipSpace()
        guard peek == UInt8(ascii: "\"") else { return nil }
        position += 1
        let start = position
        var escaped = false
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                return ScannedString(raw: raw, escaped: escaped, quoted: UnsafeBufferPointer(rebasing: bytes[(start - 1)..<position]))
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                position += 2
            } else {
                position += 1
            }
        }
        return nil
    }

    /// Skips one value of any kind (after spaces); false when the bytes end first.
    private mutating func skipValue() -> Bool {
        skipSpace()
        var depth = 0
        repeat {
            guard position < bytes.count else { return false }
            switch bytes[position] {
            case UInt8(ascii: "\""):
                guard string() != nil else { return false }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                position += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { return false }
                depth -= 1
                position += 1
            default:
                // A number, a literal, or the spaces, commas and colons inside a container.
                guard depth > 0 || bytes[position] > 0x20 else { return false }
                position += 1
                if depth == 0 {
                    while position < bytes.count, !Self.endsScalar(bytes[position]) { position += 1 }
                }
            }
        } while depth > 0
        return true
    }

    private static func endsScalar(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte <= 0x20
    }

    private var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        guard peek == byte else { return false }
        position += 1
        return true
    }

    private mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }
}

/// A JSON string as it lies in the file.
private struct ScannedString {
    let raw: UnsafeBufferPointer<UInt8>
    let escaped: Bool
    /// The string with its quotes, for unescaping by the full parser.
    let quoted: UnsafeBufferPointer<UInt8>

    /// The string's text: its bytes as they are, or unescaped by the full parser; nil when the
    /// bytes are not valid UTF-8 or the escapes are invalid.
    var text: String? {
        guard escaped else {
            // ASCII needs no validation, nor the generic validating initializer's cost.
            if raw.allSatisfy({ $0 < 0x80 }) { return String(decoding: raw, as: UTF8.self) }
            return String(validating: raw, as: UTF8.self)
        }
        do {
            guard case .string(let text) = try JSONParser.parse(Array(quoted)) else { return nil }
            return text
        } catch {
            return nil   // the full parser reads the file and reports the escape
        }
    }
}
