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

private struct Walker {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func file(wanted: [[UInt8]]) -> [FieldScanner.Entry]? {
        guard consume(UInt8(ascii: "{")) else { return nil }
        var entries: [FieldScanner.Entry]?
        var first = true
        while true {
            skipSpace()
            if peek == UInt8(ascii: "}") { position += 1; break }
            if !first { guard consume(UInt8(ascii: ",")) else { return nil } }
            first = false
            guard let key = string(), consume(UInt8(ascii: ":")) else { return nil }
            if !key.escaped, key.raw.elementsEqual("entities".utf8) {
                guard entries == nil, let found = entities(wanted: wanted) else { return nil }
                entries = found
            } else {
                guard skipValue() else { return nil }
            }
        }
        skipSpace()
        return position == bytes.count ? entries : nil
    }

    private mutating func entities(wanted: [[UInt8]]) -> [FieldScanner.Entry]? {
        guard consume(UInt8(ascii: "{")) else { return nil }
        var entries: [FieldScanner.Entry] = []
        var first = true
        while true {
            skipSpace()
            if peek == UInt8(ascii: "}") { position += 1; return entries }
            if !first { guard consume(UInt8(ascii: ",")) else { return nil } }
            first = false
            guard let id = string(), let idText = id.text, consume(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            let start = position
            guard let row = entity(wanted: wanted) else { return nil }
            entries.append(FieldScanner.Entry(id: idText, range: start..<position, row: row))
        }
    }

    /// One entity's object: the wanted top-level fields' values, the rest skipped.
    private mutating func entity(wanted: [[UInt8]]) -> FieldRow? {
        guard consume(UInt8(ascii: "{")) else { return nil }
        var row = FieldRow(values: Array(repeating: nil, count: wanted.count))
        var first = true
        while true {
            skipSpace()
            if peek == UInt8(ascii: "}") { position += 1; return row }
            if !first { guard consume(UInt8(ascii: ",")) else { return nil } }
            first = false
            guard let key = string(), consume(UInt8(ascii: ":")) else { return nil }
            let slots: [Int]
            if key.escaped {
                guard let text = key.text else { return nil }
                slots = wanted.indices.filter { wanted[$0].elementsEqual(text.utf8) }
            } else {
                slots = wanted.indices.filter { wanted[$0].elementsEqual(key.raw) }
            }
            guard !slots.isEmpty else {
                guard skipValue() else { return nil }
                continue
            }
            skipSpace()
            guard let value = scalar() else { return nil }
            for slot in slots { row.values[slot] = value }
        }
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
